//! The fleet report (`sqliosim report` over many runs): through the binary over directories of
//! real run summaries (host names rewritten in copies, since every real run here shares this
//! machine's), the JUnit output against the Jenkins junit-10.xsd expectations, the fleet page in
//! headless Chromium, and the merge property (merged histograms give the percentiles of one
//! histogram fed every sample), `--expect-hosts`, and hosts told apart by machine id and label.

mod bundle;
mod cli;
mod expect;
mod hostile;
mod html;
mod identity;
pub(crate) mod junit;
mod props;
mod support;
