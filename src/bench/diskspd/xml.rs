//! DiskSpd's XML result layout (`-Rxml`): `<Results>` with the system, the profile (usable
//! as an `-X` profile by DiskSpd) and one `<TimeSpan>` with CPU utilisation, the latency
//! percentile buckets, optional per-interval IOPS and per-thread targets.

use super::args::DiskspdArgs;
use super::Report;
use crate::bench::latency::{BenchStats, PERCENTILES};
use quick_xml::events::BytesText;
use quick_xml::Writer;
use std::fmt::Display;
use std::io;

type W = Writer<Vec<u8>>;

fn leaf(w: &mut W, name: &str, v: impl Display) -> io::Result<()> {
    w.create_element(name)
        .write_text_content(BytesText::new(&v.to_string()))?;
    Ok(())
}

fn ms(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

fn system(w: &mut W, rep: &Report) -> io::Result<()> {
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
        leaf(w, "ProcCount", rep.result.cpu.per_cpu.len())
    })?;
    Ok(())
}

fn target_profile(w: &mut W, a: &DiskspdArgs, path: &str, size: u64) -> io::Result<()> {
    w.create_element("Target").write_inner_content(|w| {
        leaf(w, "Path", path)?;
        leaf(w, "BlockSize", a.block)?;
        leaf(
            w,
            "BaseFileOffset",
            a.base_offset.max(crate::bench::target::DATA_OFFSET),
        )?;
        if let Some(max) = a.max_offset {
            leaf(w, "MaxFileSize", max)?;
        }
        leaf(w, "DisableOSCache", a.no_cache)?;
        leaf(w, "WriteThrough", a.write_through)?;
        w.create_element("WriteBufferContent")
            .write_inner_content(|w| leaf(w, "Pattern", if a.zeros { "zero" } else { "random" }))?;
        leaf(w, "FileSize", size)?;
        match a.random {
            Some(r) => leaf(w, "Random", if r > 0 { r } else { a.block })?,
            None => leaf(w, "StrideSize", a.block)?,
        }
        leaf(w, "ThreadStride", 0)?;
        leaf(w, "RequestCount", a.outstanding)?;
        leaf(w, "WriteRatio", a.write_pct)?;
        leaf(w, "ThreadsPerFile", a.threads)
    })?;
    Ok(())
}

fn profile(w: &mut W, a: &DiskspdArgs, rep: &Report) -> io::Result<()> {
    w.create_element("Profile").write_inner_content(|w| {
        leaf(w, "Progress", 0)?;
        leaf(w, "ResultFormat", "xml")?;
        leaf(w, "Verbose", false)?;
        w.create_element("TimeSpans").write_inner_content(|w| {
            w.create_element("TimeSpan").write_inner_content(|w| {
                leaf(w, "MeasureLatency", a.latency)?;
                leaf(w, "CalculateIopsStdDev", a.iops_interval_ms.is_some())?;
                leaf(w, "Duration", a.duration)?;
                leaf(w, "Warmup", a.warmup)?;
                leaf(w, "Cooldown", a.cooldown)?;
                leaf(w, "RandSeed", a.seed)?;
                w.create_element("Targets").write_inner_content(|w| {
                    rep.result
                        .targets
                        .iter()
                        .try_for_each(|t| target_profile(w, a, &t.path, t.size))
                })?;
                Ok(())
            })?;
            Ok(())
        })?;
        Ok(())
    })?;
    Ok(())
}

fn cpu(w: &mut W, rep: &Report) -> io::Result<()> {
    w.create_element("CpuUtilization")
        .write_inner_content(|w| {
            for (i, c) in rep.result.cpu.per_cpu.iter().enumerate() {
                w.create_element("CPU").write_inner_content(|w| {
                    leaf(w, "Group", 0)?;
                    leaf(w, "Id", i)?;
                    leaf(w, "UsagePercent", format!("{:.2}", c.usage))?;
                    leaf(w, "UserPercent", format!("{:.2}", c.user))?;
                    leaf(w, "KernelPercent", format!("{:.2}", c.kernel))?;
                    leaf(w, "IdlePercent", format!("{:.2}", c.idle))
                })?;
            }
            Ok(())
        })?;
    Ok(())
}

fn latency(w: &mut W, total: &BenchStats) -> io::Result<()> {
    let (r, wr, t) = (&total.read, &total.write, total.total());
    let mut el = w.create_element("Latency");
    for (name, h) in [
        ("ReadHistoBuckets", r),
        ("WriteHistoBuckets", wr),
        ("TotalHistoBuckets", &t),
    ] {
        if !h.is_empty() {
            el = el.with_attribute((name, h.iter_recorded().count().to_string().as_str()));
        }
    }
    el.write_inner_content(|w| {
        for (name, h) in [("Read", r), ("Write", wr), ("Total", &t)] {
            if !h.is_empty() {
                leaf(
                    w,
                    &format!("Average{name}Milliseconds"),
                    format!("{:.3}", h.mean() / 1e6),
                )?;
                leaf(
                    w,
                    &format!("{name}LatencyStdev"),
                    format!("{:.3}", h.stdev() / 1e6),
                )?;
            }
        }
        let mut points: Vec<f64> = vec![0.0];
        points.extend(PERCENTILES.iter().map(|p| p.0));
        points.push(100.0);
        for p in points {
            w.create_element("Bucket").write_inner_content(|w| {
                leaf(w, "Percentile", p)?;
                for (name, h) in [("Read", r), ("Write", wr), ("Total", &t)] {
                    if !h.is_empty() {
                        let v = match p {
                            0.0 => h.min(),
                            100.0 => h.max(),
                            _ => h.value_at_quantile(p / 100.0),
                        };
                        leaf(w, &format!("{name}Milliseconds"), ms(v))?;
                    }
                }
                Ok(())
            })?;
        }
        Ok(())
    })?;
    Ok(())
}

fn threads(w: &mut W, a: &DiskspdArgs, rep: &Report) -> io::Result<()> {
    let r = &rep.result;
    for (i, t) in r.threads.iter().enumerate() {
        let tg = &r.targets[i / r.job.threads_per_target as usize];
        w.create_element("Thread").write_inner_content(|w| {
            leaf(w, "Id", i)?;
            w.create_element("Target").write_inner_content(|w| {
                leaf(w, "Path", &tg.path)?;
                leaf(w, "BytesCount", t.bytes())?;
                leaf(w, "FileSize", tg.size)?;
                leaf(w, "IOCount", t.ios())?;
                leaf(w, "ReadBytes", t.read_bytes)?;
                leaf(w, "ReadCount", t.read_ios)?;
                leaf(w, "WriteBytes", t.write_bytes)?;
                leaf(w, "WriteCount", t.write_ios)?;
                if a.latency {
                    for (name, h) in [("Read", &t.read), ("Write", &t.write)] {
                        if !h.is_empty() {
                            leaf(
                                w,
                                &format!("Average{name}LatencyMilliseconds"),
                                format!("{:.3}", h.mean() / 1e6),
                            )?;
                        }
                    }
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
        leaf(w, "RequestCount", a.outstanding)?;
        leaf(w, "ProcCount", r.cpu.per_cpu.len())?;
        cpu(w, rep)?;
        if a.latency {
            latency(w, &r.total)?;
        }
        if a.iops_interval_ms.is_some() {
            w.create_element("Iops").write_inner_content(|w| {
                r.total.timeline.iter().enumerate().try_for_each(|(i, n)| {
                    w.create_element("Bucket")
                        .with_attribute((
                            "SampleMillisecond",
                            ((i + 1) * 1000).to_string().as_str(),
                        ))
                        .with_attribute(("Total", n.to_string().as_str()))
                        .write_empty()
                        .map(|_| ())
                })
            })?;
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
            leaf(
                w,
                "Error",
                "The test was interrupted before the measurements began. No results are displayed.",
            )
        } else {
            timespan(w, a, rep)
        }
    })?;
    let mut s = String::from_utf8(w.into_inner()).map_err(io::Error::other)?;
    s.push('\n');
    Ok(s)
}
