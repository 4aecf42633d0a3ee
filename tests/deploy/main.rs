//! deploy/ for real, in one test binary (issue #22 §11): the Ansible playbook over namespace
//! hosts reached by SSH (`fleet_ansible`, with its long reruns in `fleet_ansible::fleet_long`),
//! the Kubernetes manifests and the playbook's syntax checked offline (`manifests`), the
//! systemd unit (`systemd_unit`), collect.sh over two stand-in pods (`collect`), a pod
//! restarted after a power cut (`restart`), and the container image's root filesystem with the
//! pods' commands run in it (`rootfs`). Each topic is a module.
//!
//! The Ansible tests take minutes of wall time, mostly waiting on SSH and the runs; in one
//! binary the other topics run beside them instead of after them. Each test skips (SKIPPED
//! line) when its tool is missing, and fails instead when its SQLIOSIM_REQUIRE_* is set (see
//! each module and .ci/run).

mod fleet_support;

mod collect;
mod fleet_ansible;
mod fleet_campaign;
mod manifests;
mod restart;
mod rootfs;
mod systemd_unit;
