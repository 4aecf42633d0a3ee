//! The `<System>` and `<Profile>` parts of DiskSpd's XML result, in the order and nesting of
//! DiskSpd's own writer (`SystemInformation::GetXml`, `Profile::GetXml`, `TimeSpan::GetXml`,
//! `Target::GetXml` in microsoft/diskspd Common/). The profile can be fed back to DiskSpd
//! as an `-X` profile. What DiskSpd writes only under switches we do not support (ETW,
//! distributions, affinity lists, thread targets) is left out, as DiskSpd leaves it out.

use super::{leaf, W};
use crate::bench::diskspd::args::DiskspdArgs;
use crate::bench::diskspd::topology::mask;
use crate::bench::diskspd::Report;
use std::io;

/// `<System>`: host, tool, start time and processor topology.
pub fn system(w: &mut W, rep: &Report) -> io::Result<()> {
    w.create_element("System").write_inner_content(|w| {
        leaf(w, "ComputerName", &rep.host)?;
        w.create_element("Tool").write_inner_content(|w| {
            leaf(
                w,
                "Version",
                concat!("sqliosim ", env!("CARGO_PKG_VERSION")),
            )?;
            leaf(w, "VersionDate", "")
        })?;
        leaf(w, "RunTime", &rep.start_time)?;
        topology(w, rep)
    })?;
    Ok(())
}

fn topology(w: &mut W, rep: &Report) -> io::Result<()> {
    let t = &rep.topology;
    let all: Vec<u32> = t.cpus.iter().map(|c| c.id).collect();
    w.create_element("ProcessorTopology")
        .write_inner_content(|w| {
            let n = all.len().to_string();
            w.create_element("Group")
                .with_attributes([
                    ("Group", "0"),
                    ("MaximumProcessors", n.as_str()),
                    ("ActiveProcessors", n.as_str()),
                    ("ActiveProcessorMask", mask(&all).as_str()),
                ])
                .write_empty()?;
            for (node, ids) in t.by(|c| c.node) {
                w.create_element("Node")
                    .with_attributes([
                        ("Node", node.to_string().as_str()),
                        ("Group", "0"),
                        ("Processors", mask(&ids).as_str()),
                    ])
                    .write_empty()?;
            }
            for ids in t.by(|c| c.socket).values() {
                w.create_element("Socket").write_inner_content(|w| {
                    w.create_element("Group")
                        .with_attributes([("Group", "0"), ("Processors", mask(ids).as_str())])
                        .write_empty()?;
                    Ok(())
                })?;
            }
            for ids in t.by(|c| (c.socket, c.core)).values() {
                w.create_element("HyperThread")
                    .with_attributes([("Group", "0"), ("Processors", mask(ids).as_str())])
                    .write_empty()?;
            }
            Ok(())
        })?;
    Ok(())
}

fn target(w: &mut W, a: &DiskspdArgs, path: &str, size: u64) -> io::Result<()> {
    w.create_element("Target").write_inner_content(|w| {
        leaf(w, "Path", path)?;
        leaf(w, "BlockSize", a.block)?;
        leaf(
            w,
            "BaseFileOffset",
            a.base_offset.max(crate::bench::target::DATA_OFFSET),
        )?;
        for hint in [
            "SequentialScan",
            "RandomAccess",
            "TemporaryFile",
            "UseLargePages",
        ] {
            leaf(w, hint, false)?;
        }
        if a.no_cache {
            leaf(w, "DisableOSCache", true)?;
        }
        if a.write_through {
            leaf(w, "WriteThrough", true)?;
        }
        w.create_element("WriteBufferContent")
            .write_inner_content(|w| leaf(w, "Pattern", if a.zeros { "zero" } else { "random" }))?;
        leaf(w, "ParallelAsyncIO", false)?;
        if a.create.is_some() {
            leaf(w, "FileSize", size)?;
        }
        match a.random {
            Some(r) => leaf(w, "Random", if r > 0 { r } else { a.block })?,
            None => {
                leaf(w, "StrideSize", a.block)?;
                leaf(w, "InterlockedSequential", false)?;
            }
        }
        leaf(w, "ThreadStride", 0)?;
        leaf(w, "MaxFileSize", a.max_offset.unwrap_or(0))?;
        leaf(w, "RequestCount", a.outstanding)?;
        leaf(w, "WriteRatio", a.write_pct)?;
        throughput(w, a)?;
        leaf(
            w,
            "ThreadsPerFile",
            if a.total_threads.is_some() {
                1
            } else {
                a.threads
            },
        )?;
        leaf(w, "IOPriority", 3)?;
        leaf(w, "Weight", 1)
    })?;
    Ok(())
}

/// `<Throughput>` in bytes per millisecond, or with `unit="IOPS"` as `-g…i` gave it.
fn throughput(w: &mut W, a: &DiskspdArgs) -> io::Result<()> {
    match a.throughput {
        Some((v, true)) => {
            w.create_element("Throughput")
                .with_attribute(("unit", "IOPS"))
                .write_text_content(quick_xml::events::BytesText::new(&format!("{v:.0}")))?;
            Ok(())
        }
        Some((v, false)) => leaf(w, "Throughput", format!("{v:.0}")),
        None => leaf(w, "Throughput", 0),
    }
}

/// `<Profile>`: the switches as DiskSpd's profile of one timespan.
pub fn profile(w: &mut W, a: &DiskspdArgs, rep: &Report) -> io::Result<()> {
    w.create_element("Profile").write_inner_content(|w| {
        leaf(w, "Progress", 0)?;
        leaf(w, "ResultFormat", "xml")?;
        leaf(w, "Verbose", false)?;
        w.create_element("TimeSpans").write_inner_content(|w| {
            w.create_element("TimeSpan").write_inner_content(|w| {
                leaf(w, "CompletionRoutines", false)?;
                leaf(w, "MeasureLatency", a.latency)?;
                leaf(w, "CalculateIopsStdDev", a.iops_interval_ms.is_some())?;
                // sqliosim never pins its threads to CPUs (DiskSpd's -n).
                leaf(w, "DisableAffinity", true)?;
                leaf(w, "Duration", a.duration)?;
                leaf(w, "Warmup", a.warmup)?;
                leaf(w, "Cooldown", a.cooldown)?;
                leaf(w, "ThreadCount", a.total_threads.unwrap_or(0))?;
                leaf(w, "RequestCount", 0)?;
                // IOPS are counted per second whatever -D asked for.
                leaf(w, "IoBucketDuration", 1000)?;
                leaf(w, "RandSeed", a.seed)?;
                w.create_element("Targets").write_inner_content(|w| {
                    rep.result
                        .targets
                        .iter()
                        .enumerate()
                        .try_for_each(|(i, t)| target(w, a, a.shown(i, &t.path), t.size))
                })?;
                Ok(())
            })?;
            Ok(())
        })?;
        Ok(())
    })?;
    Ok(())
}
