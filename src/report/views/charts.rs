//! SVG charts for the HTML report, drawn with plotters' SVG backend.

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::findings::Finding;
use crate::stats::{Latency, TimelinePoint};

pub(crate) const W: u32 = 900;
pub(crate) const H: u32 = 320;
pub(crate) type Res = Result<(), Box<dyn std::error::Error>>;

/// A chart, or a placeholder saying why there is none.
pub(crate) fn svg(draw: impl FnOnce(&mut String) -> Res) -> String {
    let mut out = String::new();
    match draw(&mut out) {
        Ok(()) => out,
        Err(e) => placeholder(&format!("chart unavailable: {e}")),
    }
}

/// An SVG box with a one-line note.
pub fn placeholder(text: &str) -> String {
    format!(
        "<svg xmlns='http://www.w3.org/2000/svg' width='{W}' height='60'><text x='10' y='35' font-family='sans-serif' font-size='14'>{}</text></svg>",
        quick_xml::escape::escape(text)
    )
}

/// The one HTML escaper of the reports (text and attribute values alike): quick-xml's.
pub(crate) fn html_escape(s: &str) -> String {
    quick_xml::escape::escape(s).into_owned()
}

pub(crate) fn max_of(v: impl Iterator<Item = f64>) -> f64 {
    v.fold(0.0, f64::max).max(1e-9) * 1.1
}

/// The frame every chart here shares: the caption, margin and label areas (the y labels
/// `y_area` pixels wide).
pub(crate) fn frame<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, Shift>,
    title: &str,
    y_area: u32,
) -> ChartBuilder<'a, 'b, SVGBackend<'b>> {
    let mut b = ChartBuilder::on(root);
    b.caption(title, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(y_area);
    b
}

/// Draws each named series as a line in its own colour with a legend entry (and a dot on
/// each point when `dots`), then the legend.
pub(crate) fn draw_lines<'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    lines: &[(&str, Vec<(f64, f64)>)],
    dots: bool,
) -> Res
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    for (i, (name, pts)) in lines.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))?
            .label(*name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        if dots {
            chart.draw_series(pts.iter().map(|p| Circle::new(*p, 3, color.filled())))?;
        }
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

/// One or more series over the run time.
pub fn time_chart(title: &str, y_label: &str, series: &[(&str, Vec<(f64, f64)>)]) -> String {
    if series.iter().all(|(_, s)| s.is_empty()) {
        return placeholder(&format!("{title}: no data"));
    }
    svg(|out| {
        let root = SVGBackend::with_string(out, (W, H)).into_drawing_area();
        root.fill(&WHITE)?;
        let x_max = max_of(series.iter().flat_map(|(_, s)| s.iter().map(|p| p.0))).max(1.0);
        let y_max = max_of(series.iter().flat_map(|(_, s)| s.iter().map(|p| p.1)));
        let mut chart = frame(&root, title, 60).build_cartesian_2d(0f64..x_max, 0f64..y_max)?;
        chart
            .configure_mesh()
            .x_desc("seconds since start")
            .y_desc(y_label)
            .draw()?;
        draw_lines(&mut chart, series, false)?;
        root.present()?;
        Ok(())
    })
}

/// IOPS and MB/s charts over the run, from the timeline.
pub fn timeline_charts(points: &[TimelinePoint]) -> [String; 2] {
    let mid = |p: &TimelinePoint| p.t_s as f64 + p.width_s as f64 / 2.0;
    let iops: Vec<(f64, f64)> = points.iter().map(|p| (mid(p), p.iops)).collect();
    let rd: Vec<(f64, f64)> = points.iter().map(|p| (mid(p), p.read_mb_s)).collect();
    let wr: Vec<(f64, f64)> = points.iter().map(|p| (mid(p), p.write_mb_s)).collect();
    [
        time_chart("IOPS over time", "IOPS", &[("IOPS", iops)]),
        time_chart("MB/s over time", "MB/s", &[("read", rd), ("write", wr)]),
    ]
}

/// Requests in flight over the run (most at once and time-weighted mean per bucket), from the
/// timeline; `None` when the timeline has no depth (an older summary).
pub fn depth_chart(points: &[TimelinePoint]) -> Option<String> {
    if points.iter().all(|p| p.inflight_max == 0) {
        return None;
    }
    let mid = |p: &TimelinePoint| p.t_s as f64 + p.width_s as f64 / 2.0;
    let max: Vec<(f64, f64)> = points
        .iter()
        .map(|p| (mid(p), p.inflight_max as f64))
        .collect();
    let mean: Vec<(f64, f64)> = points.iter().map(|p| (mid(p), p.inflight_mean)).collect();
    Some(time_chart(
        "Requests in flight over time",
        "requests in flight",
        &[("most at once", max), ("time-weighted mean", mean)],
    ))
}

const PERCENTILES: [&str; 6] = ["min", "p50", "p90", "p99", "p99.9", "max"];

/// (name, [(percentile index, latency ms)]) of the series that have data.
fn percentile_points(series: &[(String, Latency)]) -> Vec<(&str, Vec<(f64, f64)>)> {
    series
        .iter()
        .filter(|(_, l)| l.count > 0)
        .map(|(name, l)| {
            let v = [l.min_us, l.p50_us, l.p90_us, l.p99_us, l.p999_us, l.max_us];
            let pts = v
                .iter()
                .enumerate()
                .map(|(x, us)| (x as f64, (us / 1000.0).max(1e-3)));
            (name.as_str(), pts.collect())
        })
        .collect()
}

/// Latency percentiles (min … max, log scale) of each named series (files or actors).
pub fn percentile_chart(title: &str, series: &[(String, Latency)]) -> String {
    let lines = percentile_points(series);
    if lines.is_empty() {
        return placeholder(&format!("{title}: no data"));
    }
    let ys = || lines.iter().flat_map(|(_, p)| p.iter().map(|p| p.1));
    let y_max = max_of(ys());
    let y_min = (ys().fold(f64::MAX, f64::min) / 2.0).clamp(1e-3, y_max / 10.0);
    svg(|out| {
        let root = SVGBackend::with_string(out, (W, H)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = frame(&root, title, 60)
            .build_cartesian_2d(-0.2f64..5.2f64, (y_min..y_max).log_scale())?;
        let label = |x: &f64| {
            PERCENTILES
                .get(x.round() as usize)
                .map_or(String::new(), |s| s.to_string())
        };
        chart
            .configure_mesh()
            .x_labels(6)
            .x_label_formatter(&label)
            .y_desc("latency (ms, log)")
            .draw()?;
        draw_lines(&mut chart, &lines, true)?;
        root.present()?;
        Ok(())
    })
}

/// The end of the findings chart's time axis, in seconds: the run's span from start to end
/// when known (a finding past it, from clocks that disagree, widens it), else the last
/// finding's time with a margin.
pub fn findings_axis_max(times: impl Iterator<Item = f64>, span_s: Option<f64>) -> f64 {
    match span_s {
        Some(span) if span > 0.0 => times.fold(span, f64::max),
        _ => max_of(times).max(1.0),
    }
}

/// When each finding happened (seconds since `origin_us`), one row per class, on an axis
/// spanning `span_s` (the run's duration) when known ([`findings_axis_max`]).
pub fn findings_chart(findings: &[Finding], origin_us: u64, span_s: Option<f64>) -> String {
    if findings.is_empty() {
        return placeholder("Findings over time: none");
    }
    let mut classes: Vec<&str> = findings.iter().map(|f| f.class.as_str()).collect();
    classes.sort_unstable();
    classes.dedup();
    let t = |f: &Finding| f.time_us.saturating_sub(origin_us) as f64 / 1e6;
    svg(|out| {
        let root =
            SVGBackend::with_string(out, (W, 120 + 30 * classes.len() as u32)).into_drawing_area();
        root.fill(&WHITE)?;
        let x_max = findings_axis_max(findings.iter().map(t), span_s);
        let mut chart = frame(&root, "Findings over time", 140)
            .build_cartesian_2d(0f64..x_max, -0.5f64..classes.len() as f64 - 0.5)?;
        chart
            .configure_mesh()
            .y_labels(classes.len())
            .y_label_formatter(&|y| {
                let i = y.round();
                if (y - i).abs() < 1e-6 && i >= 0.0 {
                    classes
                        .get(i as usize)
                        .map_or(String::new(), |s| s.to_string())
                } else {
                    String::new()
                }
            })
            .x_desc("seconds since start")
            .draw()?;
        let row = |f: &Finding| {
            classes
                .iter()
                .position(|c| *c == f.class.as_str())
                .unwrap_or(0) as f64
        };
        chart.draw_series(
            findings
                .iter()
                .map(|f| Circle::new((t(f), row(f)), 5, RED.filled())),
        )?;
        root.present()?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::findings_axis_max;

    #[test]
    fn the_findings_axis_spans_the_whole_run() {
        // A 40 s run whose last finding came at 16 s.
        let times = [2.0, 9.5, 16.0];
        assert_eq!(findings_axis_max(times.into_iter(), Some(40.0)), 40.0);
        // A finding past the end (clocks that disagree) stays on the chart.
        assert_eq!(findings_axis_max([41.0].into_iter(), Some(40.0)), 41.0);
        // Without the run's times, the findings with a margin.
        let m = findings_axis_max(times.into_iter(), None);
        assert!((m - 17.6).abs() < 1e-9, "{m}");
    }
}
