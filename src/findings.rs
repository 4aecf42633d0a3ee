//! Findings: integrity problems found while working. Placeholder until the page engine lands.
