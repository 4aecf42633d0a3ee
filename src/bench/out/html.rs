//! A self-contained HTML page for a sweep: IOPS and latency against total queue depth, one
//! curve per (block size, pattern, rw, threads), drawn as inline SVG with plotters, plus the
//! table and the saturation points.

use crate::bench::sweep::{CellResult, Saturation};
use plotters::prelude::*;

type Curve = (String, Vec<(f64, f64)>);

fn curves(cells: &[CellResult], y: impl Fn(&CellResult) -> f64) -> Vec<Curve> {
    let mut out: Vec<Curve> = Vec::new();
    for c in cells {
        let name = format!(
            "{}K {} {} t{}",
            c.cell.block_size / 1024,
            c.cell.pattern.name(),
            c.rw_name(),
            c.cell.threads
        );
        let point = (f64::from(c.queue_depth).log2(), y(c));
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some((_, pts)) => pts.push(point),
            None => out.push((name, vec![point])),
        }
    }
    for (_, pts) in &mut out {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

/// The label of the log2 queue-depth axis at `x`: the power of two at a whole exponent, none
/// between. plotters puts ticks on halves of a short axis, whose labels (2^0.5 → "1",
/// 2^1.5 → "3") would not be queue depths; its steps (1, 2, 5 × 10^k) always include the
/// whole exponents, or every other one.
fn qd_label(x: &f64) -> String {
    if (x - x.round()).abs() > 1e-9 {
        return String::new();
    }
    format!("{}", 2f64.powf(x.round()))
}

/// Draws `curves` as an SVG line chart with a log2 queue-depth axis.
pub fn chart(title: &str, y_desc: &str, curves: &[Curve]) -> Result<String, String> {
    let xmax = curves
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.0))
        .fold(1.0, f64::max);
    let ymax = curves
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.1))
        .fold(1.0, f64::max)
        * 1.1;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (760, 380)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..xmax.max(1.0), 0f64..ymax)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc("total queue depth")
            .y_desc(y_desc)
            .x_label_formatter(&qd_label)
            .draw()
            .map_err(|e| e.to_string())?;
        for (i, (name, pts)) in curves.iter().enumerate() {
            let style = Palette99::pick(i).stroke_width(2);
            chart
                .draw_series(LineSeries::new(pts.iter().copied(), style))
                .map_err(|e| e.to_string())?
                .label(name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        }
        chart
            .configure_series_labels()
            .border_style(BLACK)
            .background_style(WHITE.mix(0.8))
            .draw()
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// One table row per saturation point.
fn saturation_rows(sat: &[Saturation]) -> String {
    sat
        .iter()
        .map(|s| {
            format!(
                "<tr><td>{}K</td><td class='l'>{}</td><td class='l'>{}</td><td>{}</td><td>{}x{}</td><td>{:.0}</td><td>{:.1}</td><td>{:.1}</td><td>{:.0} @ QD {}</td></tr>\n",
                s.block_size / 1024, s.pattern, s.rw, s.queue_depth, s.threads, s.outstanding, s.iops, s.avg_us, s.p99_us, s.best_iops, s.best_queue_depth
            )
        })
        .collect()
}

/// The whole page.
pub fn page(cells: &[CellResult], sat: &[Saturation], table: &str) -> Result<String, String> {
    let iops = chart(
        "IOPS against queue depth",
        "IOPS",
        &curves(cells, |c| c.iops),
    )?;
    let p99 = |c: &CellResult| c.latency.as_ref().and_then(|l| l.at(99.0)).unwrap_or(0.0);
    let avg = |c: &CellResult| c.latency.as_ref().map(|l| l.avg_us).unwrap_or(0.0);
    let lat_avg = chart(
        "mean latency against queue depth",
        "latency (us)",
        &curves(cells, avg),
    )?;
    let lat_p99 = chart(
        "p99 latency against queue depth",
        "latency (us)",
        &curves(cells, p99),
    )?;
    let sat_rows = saturation_rows(sat);
    let mut page = format!(
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>sqliosim bench</title>\
         <style>{STYLE}</style></head><body>\n<h1>sqliosim bench</h1>\n"
    );
    page.push_str("<h2>Saturation</h2>\n<table><tr><th>block</th><th class='l'>pattern</th><th class='l'>rw</th>");
    page.push_str("<th>QD</th><th>threads x out</th><th>IOPS</th><th>avg us</th><th>p99 us</th><th>best</th></tr>\n");
    page.push_str(&sat_rows);
    page.push_str("</table>\n<h2>Curves</h2>\n");
    for svg in [iops, lat_avg, lat_p99] {
        page.push_str(&format!("<div class='chart'>{svg}</div>\n"));
    }
    page.push_str(&format!(
        "<h2>All results</h2>\n<pre>{}</pre>\n</body></html>\n",
        // Element content only: quick-xml's partial escape (& < >) keeps quotes as typed.
        quick_xml::escape::partial_escape(table)
    ));
    Ok(page)
}

/// The look of `sqliosim report`'s page (src/report/views/html.rs), so both reports read alike.
const STYLE: &str = "body{font-family:sans-serif;font-size:14px;margin:20px;color:#222}\
table{border-collapse:collapse;margin:8px 0 20px}th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}\
th{background:#eee}td.l,th.l{text-align:left}.chart{margin:10px 0}pre{background:#f6f6f6;padding:1em}";

#[cfg(test)]
mod tests {
    use super::chart;

    /// The texts of an SVG's `<text>` elements.
    fn texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| t.split_once('>')?.1.split_once("</text>"))
            .map(|(t, _)| t.trim().to_string())
            .collect()
    }

    #[test]
    fn queue_depth_ticks_are_powers_of_two() {
        // Queue depths 1 to 8: a short log2 axis, where plotters' own ticks fall on halves.
        let pts = (0..=3).map(|e| (f64::from(e), 0.5)).collect();
        let svg = chart("t", "y", &[("c".to_string(), pts)]).expect("chart");
        // The y labels are decimals (0.0 … 0.5): every whole number is an x label.
        let xs: Vec<u64> = texts(&svg).iter().filter_map(|t| t.parse().ok()).collect();
        assert!(xs.iter().all(|x| x.is_power_of_two()), "{xs:?}");
        for qd in [1, 2, 4, 8] {
            assert!(xs.contains(&qd), "no tick at {qd}: {xs:?}");
        }
    }
}
