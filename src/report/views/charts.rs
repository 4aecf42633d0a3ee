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

/// Width of the legend's column, right of a chart with named lines: the legend never covers
/// the lines (drawn inside the plot, it hid their ends).
pub(crate) const LEGEND_W: u32 = 220;

/// The plot's area and the legend's column right of it.
pub(crate) fn split_legend<'a>(
    root: &DrawingArea<SVGBackend<'a>, Shift>,
) -> (
    DrawingArea<SVGBackend<'a>, Shift>,
    DrawingArea<SVGBackend<'a>, Shift>,
) {
    let (w, _) = root.dim_in_pixel();
    root.split_horizontally(w.saturating_sub(LEGEND_W))
}

/// Draws each named series as a line in its own colour (and a dot on each point when
/// `dots`), and its legend entry in `legend` (see [`split_legend`]).
pub(crate) fn draw_lines<'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    legend: &DrawingArea<SVGBackend<'a>, Shift>,
    lines: &[(&str, Vec<(f64, f64)>)],
    dots: bool,
) -> Res
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    for (i, (_, pts)) in lines.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart.draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))?;
        if dots {
            chart.draw_series(pts.iter().map(|p| Circle::new(*p, 3, color.filled())))?;
        }
    }
    draw_legend(legend, lines.iter().map(|(name, _)| *name))
}

/// One legend entry per name, a line of its series' colour and the name (its end, when too
/// long for the column: a path's file name is what tells files apart), as many as the
/// column's height holds, then how many more.
fn draw_legend<'n>(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    names: impl Iterator<Item = &'n str>,
) -> Res {
    const ROW: i32 = 20;
    const CHARS: usize = 28;
    let names: Vec<&str> = names.collect();
    let (_, h) = area.dim_in_pixel();
    let fits = (usize::try_from(h).unwrap_or(0) / ROW as usize).saturating_sub(3);
    let shown = if names.len() > fits {
        fits.saturating_sub(1)
    } else {
        names.len()
    };
    let style = ("sans-serif", 13).into_font();
    for (i, name) in names.iter().take(shown).enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let y = 40 + ROW * i as i32;
        area.draw(&PathElement::new(
            vec![(6, y), (26, y)],
            color.stroke_width(2),
        ))?;
        let chars: Vec<char> = name.chars().collect();
        let text: String = match chars.len() > CHARS {
            true => std::iter::once('…')
                .chain(chars[chars.len() - (CHARS - 1)..].iter().copied())
                .collect(),
            false => name.to_string(),
        };
        area.draw(&Text::new(text, (32, y - 8), style.clone()))?;
    }
    if shown < names.len() {
        let y = 40 + ROW * shown as i32;
        let more = format!("… and {} more", names.len() - shown);
        area.draw(&Text::new(more, (32, y - 8), style))?;
    }
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
        let (plot, legend) = split_legend(&root);
        let x_max = max_of(series.iter().flat_map(|(_, s)| s.iter().map(|p| p.0))).max(1.0);
        let y_max = max_of(series.iter().flat_map(|(_, s)| s.iter().map(|p| p.1)));
        let mut chart = frame(&plot, title, 60).build_cartesian_2d(0f64..x_max, 0f64..y_max)?;
        chart
            .configure_mesh()
            .x_desc("seconds since start")
            .y_desc(y_label)
            .draw()?;
        draw_lines(&mut chart, &legend, series, false)?;
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
        let (plot, legend) = split_legend(&root);
        let mut chart = frame(&plot, title, 60)
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
        draw_lines(&mut chart, &legend, &lines, true)?;
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
    use super::{findings_axis_max, time_chart, LEGEND_W, W};

    /// The `x` of each `<text>` whose content is `name`.
    fn text_x(svg: &str, name: &str) -> Vec<u32> {
        svg.split("<text ")
            .skip(1)
            .filter(|t| {
                t.split('>')
                    .nth(1)
                    .is_some_and(|c| c.trim().starts_with(name))
            })
            .filter_map(|t| t.split("x=\"").nth(1)?.split('"').next()?.parse().ok())
            .collect()
    }

    #[test]
    fn the_legend_stands_beside_the_plot_and_never_over_its_lines() {
        let line = |k: f64| (0..=20).map(|i| (f64::from(i), k * f64::from(i))).collect();
        let svg = time_chart("t", "y", &[("alpha", line(1.0)), ("beta", line(2.0))]);
        let plot_w = W - LEGEND_W;
        for name in ["alpha", "beta"] {
            let xs = text_x(&svg, name);
            assert!(
                !xs.is_empty() && xs.iter().all(|&x| x >= plot_w),
                "{name}: {xs:?}"
            );
        }
        // Every point of the two 21-point lines is left of the legend's column (the mesh's
        // and the legend's own strokes have two points each).
        let points: Vec<u32> = svg
            .split("points=\"")
            .skip(1)
            .filter_map(|p| p.split('"').next())
            .filter(|p| p.split_whitespace().count() == 21)
            .flat_map(|p| p.split_whitespace())
            .filter_map(|xy| xy.split(',').next()?.parse().ok())
            .collect();
        assert_eq!(points.len(), 42, "{svg}");
        assert!(points.iter().all(|&x| x < plot_w), "{points:?}");
        // So no legend entry starts where a line still runs (inside the plot, the legend's
        // box stood over the lines' right ends).
        let right = points.iter().max().copied().unwrap_or(0);
        assert!(text_x(&svg, "alpha").iter().all(|&x| x > right));
    }

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
