//! [`Offer`]: a clap value parser that names the values an option takes, so that `--help`
//! lists them and clap_complete writes them into the completion scripts (`--engine <TAB>`
//! offers `uring psync sync`), while the parsing itself stays with the option's own parser.
//!
//! It wraps rather than replaces because several options accept more than they advertise:
//! aliases (`io_uring`, `seq`, `zero`) and bench's comma lists (`--rw read,write`), which a
//! plain `PossibleValuesParser` would refuse. What is refused, and the message that says so,
//! is the inner parser's as before.

use clap::builder::{PossibleValue, StringValueParser, TypedValueParser};

/// The inner value parser `P`, with `names` offered to help and completions.
#[derive(Clone, Debug)]
pub struct Offer<P> {
    inner: P,
    names: &'static [&'static str],
}

/// `inner`, offering `names` to `--help` and the completion scripts.
pub fn offer<P>(inner: P, names: &'static [&'static str]) -> Offer<P> {
    Offer { inner, names }
}

/// A string option (checked later, e.g. by bench's plan) offering `names`.
pub fn offer_str(names: &'static [&'static str]) -> Offer<StringValueParser> {
    offer(StringValueParser::new(), names)
}

impl<P> TypedValueParser for Offer<P>
where
    P: TypedValueParser,
{
    type Value = P::Value;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Self::Value, clap::Error> {
        self.inner.parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(self.names.iter().map(|n| PossibleValue::new(*n))))
    }
}
