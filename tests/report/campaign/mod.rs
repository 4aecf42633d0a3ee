//! The power-cycle campaign report (`sqliosim report CAMPAIGN_DIR`), through the binary over
//! campaign directories written by hand to the contract the campaign playbook keeps
//! (docs/fleet.md, "Campaign report"): verdicts and exit codes, the JUnit, JSON and HTML
//! outputs, and hostile trees (symlinks, bad campaign.json, escape sequences in host names).

mod hostile;
mod outputs;
mod support;
mod verdicts;
