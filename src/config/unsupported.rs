//! The CPU keys SQLIOSim has and this simulator reads but does not simulate (or that ask for
//! nothing as given), named in the run's warnings (console and XML log) whenever a
//! configuration asks for them, so that none is accepted silently. `CPUSimulation` is
//! simulated (the random users' busy work, `sim::actors::random`).

use super::sections::Config;

/// One warning per CPU key whose value asks for something the run does not do.
pub fn unsupported_cpu_keys(c: &Config) -> Vec<String> {
    let mut out = Vec::new();
    // The default (the CPUs this process may use) asks for nothing beyond what Linux does.
    if c.general.cpu_count != super::Host::detect().default_cpu_count() {
        out.push(format!(
            "CPUCount={} sets the automatic user counts and their limit, but no SQLOS schedulers \
             are created: Linux schedules the threads (restrict the CPUs with Affinity)",
            c.general.cpu_count
        ));
    }
    let r = &c.random;
    if r.yield_percentage.raw() > 0 {
        out.push(format!(
            "YieldPercentage={} is not simulated: the users are OS threads with no scheduler \
             of ours to yield",
            r.yield_percentage.raw()
        ));
    }
    if r.cpu_simulation && r.cpu_cycles_max == 0 {
        out.push(
            "CPUSimulation=TRUE with CPUCyclesMax=0 spends no cycles: set CPUCyclesMin and \
             CPUCyclesMax (rounds of busy work per random user cycle)"
                .to_string(),
        );
    } else if !r.cpu_simulation && (r.cpu_cycles_min > 0 || r.cpu_cycles_max > 0) {
        out.push(format!(
            "CPUCyclesMin={}, CPUCyclesMax={} have no effect without CPUSimulation=TRUE",
            r.cpu_cycles_min, r.cpu_cycles_max
        ));
    }
    out
}
