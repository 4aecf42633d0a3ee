//! DiskSpd's XML result layout (`-Rxml`): `<Results>` with the system, the profile (usable
//! as an `-X` profile by DiskSpd) and one `<TimeSpan>` with CPU utilisation (per CPU and the
//! average), the latency percentile buckets, the IOPS time series and per-thread targets —
//! the element order and nesting of DiskSpd's XmlResultParser.cpp, checked against the
//! skeleton in tests/bench/fixtures/diskspd-rxml-skeleton.xml. What we cannot fill honestly is
//! listed in docs/bench.md.

mod profile;

use super::args::DiskspdArgs;
use super::text::iops_stddev;
use super::Report;
use crate::bench::latency::BenchStats;
use hdrhistogram::Histogram;
use profile::{profile, system};
use quick_xml::events::BytesText;
use quick_xml::Writer;
use std::fmt::Display;
use std::io;

/// The XML writer every part writes to.
pub(crate) type W = Writer<Vec<u8>>;

/// `<name>v</name>`.
pub(crate) fn leaf(w: &mut W, name: &str, v: impl Display) -> io::Result<()> {
    w.create_element(name)
        .write_text_content(BytesText::new(&v.to_string()))?;
    Ok(())
}

fn ms(ns: f64) -> String {
    format!("{:.3}", ns / 1e6)
}

fn cpu(w: &mut W, rep: &Report) -> io::Result<()> {
    let rows = &rep.result.cpu.per_cpu;
    w.create_element("CpuUtilization")
        .write_inner_content(|w| {
            for (i, c) in rows.iter().enumerate() {
                let at = rep.topology.place(i);
                w.create_element("CPU").write_inner_content(|w| {
                    leaf(w, "Socket", at.socket)?;
                    leaf(w, "Node", at.node)?;
                    leaf(w, "Group", 0)?;
                    leaf(w, "Core", at.core)?;
                    leaf(w, "Id", at.id)?;
                    percents(w, c.usage, c.user, c.kernel, c.idle)
                })?;
            }
            let n = rows.len().max(1) as f64;
            let avg =
                |f: fn(&crate::bench::cpu::CpuRow) -> f64| rows.iter().map(f).sum::<f64>() / n;
            w.create_element("Average").write_inner_content(|w| {
                percents(
                    w,
                    avg(|c| c.usage),
                    avg(|c| c.user),
                    avg(|c| c.kernel),
                    avg(|c| c.idle),
                )
            })?;
            Ok(())
        })?;
    Ok(())
}

fn percents(w: &mut W, usage: f64, user: f64, kernel: f64, idle: f64) -> io::Result<()> {
    leaf(w, "UsagePercent", format!("{usage:.2}"))?;
    leaf(w, "UserPercent", format!("{user:.2}"))?;
    leaf(w, "KernelPercent", format!("{kernel:.2}"))?;
    leaf(w, "IdlePercent", format!("{idle:.2}"))
}

/// DiskSpd's percentile list: 0, 1 … 99, 99.9 … 99.9999999, 100.
fn percentiles() -> Vec<String> {
    let mut v: Vec<String> = (0..=99).map(|p| p.to_string()).collect();
    v.extend((1..=7).map(|d| format!("99.{}", "9".repeat(d))));
    v.push("100".into());
    v
}

fn latency(w: &mut W, total: &BenchStats) -> io::Result<()> {
    let (r, wr, t) = (&total.read, &total.write, total.total());
    let n = |h: &Histogram<u64>| h.iter_recorded().count().to_string();
    let sets = [("Read", r), ("Write", wr), ("Total", &t)];
    w.create_element("Latency")
        .with_attributes([
            ("ReadHistoBuckets", n(r).as_str()),
            ("WriteHistoBuckets", n(wr).as_str()),
            ("TotalHistoBuckets", n(&t).as_str()),
        ])
        .write_inner_content(|w| {
            for (name, h) in sets {
                if !h.is_empty() {
                    leaf(w, &format!("Average{name}Milliseconds"), ms(h.mean()))?;
                    let stdev = if name == "Total" {
                        "LatencyStdev".to_string()
                    } else {
                        format!("{name}LatencyStdev")
                    };
                    leaf(w, &stdev, ms(h.stdev()))?;
                }
            }
            for p in percentiles() {
                let q: f64 = p.parse().unwrap_or(0.0);
                w.create_element("Bucket").write_inner_content(|w| {
                    leaf(w, "Percentile", &p)?;
                    for (name, h) in sets {
                        if !h.is_empty() {
                            let v = match p.as_str() {
                                "0" => h.min(),
                                "100" => h.max(),
                                _ => h.value_at_quantile(q / 100.0),
                            };
                            leaf(w, &format!("{name}Milliseconds"), ms(v as f64))?;
                        }
                    }
                    Ok(())
                })?;
            }
            Ok(())
        })?;
    Ok(())
}

/// `<Iops>`: standard deviations and one bucket per second (reads, writes, total). The
/// per-bucket latency attributes DiskSpd adds are not kept per second here, so not written.
fn iops(w: &mut W, t: &BenchStats) -> io::Result<()> {
    let (reads, writes, total) = (&t.read_timeline, t.write_timeline(), &t.timeline);
    w.create_element("Iops").write_inner_content(|w| {
        if !total.is_empty() {
            leaf(w, "ReadIopsStdDev", format!("{:.3}", iops_stddev(reads)))?;
            leaf(w, "WriteIopsStdDev", format!("{:.3}", iops_stddev(&writes)))?;
            leaf(w, "IopsStdDev", format!("{:.3}", iops_stddev(total)))?;
        }
        for (i, n) in total.iter().enumerate() {
            let r = reads.get(i).copied().unwrap_or(0);
            w.create_element("Bucket")
                .with_attributes([
                    ("SampleMillisecond", ((i + 1) * 1000).to_string().as_str()),
                    ("Read", r.to_string().as_str()),
                    ("Write", n.saturating_sub(r).to_string().as_str()),
                    ("Total", n.to_string().as_str()),
                ])
                .write_empty()?;
        }
        Ok(())
    })?;
    Ok(())
}

fn thread_latency(w: &mut W, t: &BenchStats) -> io::Result<()> {
    let total = t.total();
    for (name, h) in [("Read", &t.read), ("Write", &t.write), ("", &total)] {
        if !h.is_empty() {
            leaf(
                w,
                &format!("Average{name}LatencyMilliseconds"),
                ms(h.mean()),
            )?;
            leaf(w, &format!("{name}LatencyStdev"), ms(h.stdev()))?;
        }
    }
    Ok(())
}

fn threads(w: &mut W, a: &DiskspdArgs, rep: &Report) -> io::Result<()> {
    let r = &rep.result;
    for (i, t) in r.threads.iter().enumerate() {
        let at = i / r.job.threads_per_target.max(1) as usize;
        let tg = &r.targets[at];
        w.create_element("Thread").write_inner_content(|w| {
            leaf(w, "Id", i)?;
            w.create_element("Target").write_inner_content(|w| {
                leaf(w, "Path", a.shown(at, &tg.path))?;
                leaf(w, "BytesCount", t.bytes())?;
                leaf(w, "FileSize", tg.size)?;
                leaf(w, "IOCount", t.ios())?;
                leaf(w, "ReadBytes", t.read_bytes)?;
                leaf(w, "ReadCount", t.read_ios)?;
                leaf(w, "WriteBytes", t.write_bytes)?;
                leaf(w, "WriteCount", t.write_ios)?;
                if a.latency {
                    thread_latency(w, t)?;
                }
                if a.iops_interval_ms.is_some() {
                    iops(w, t)?;
                }
                Ok(())
            })?;
            Ok(())
        })?;
    }
    Ok(())
}

fn timespan(w: &mut W, a: &DiskspdArgs, rep: &Report) -> io::Result<()> {
    let r = &rep.result;
    w.create_element("TimeSpan").write_inner_content(|w| {
        leaf(w, "TestTimeSeconds", format!("{:.2}", r.measured_s))?;
        leaf(w, "ThreadCount", r.threads.len())?;
        // DiskSpd's -O (requests per thread across targets), which we do not support.
        leaf(w, "RequestCount", 0)?;
        leaf(w, "ProcCount", r.cpu.per_cpu.len())?;
        cpu(w, rep)?;
        if a.latency {
            latency(w, &r.total)?;
        }
        if a.iops_interval_ms.is_some() {
            iops(w, &r.total)?;
        }
        threads(w, a, rep)
    })?;
    Ok(())
}

/// Renders the whole XML document.
pub fn render(a: &DiskspdArgs, rep: &Report) -> io::Result<String> {
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    w.create_element("Results").write_inner_content(|w| {
        system(w, rep)?;
        profile(w, a, rep)?;
        if rep.result.measured_s < 1e-7 {
            w.create_element("TimeSpan").write_inner_content(|w| {
                leaf(
                    w,
                    "Error",
                    "The test was interrupted before the measurements began. No results are displayed.",
                )
            })?;
            Ok(())
        } else {
            timespan(w, a, rep)
        }
    })?;
    let mut s = String::from_utf8(w.into_inner()).map_err(io::Error::other)?;
    s.push('\n');
    Ok(s)
}
