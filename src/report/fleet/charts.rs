//! The fleet page's charts (plotters SVG, with the single-run report's frame and helpers): a
//! bar per host and device for IOPS and for p99, and the latency distributions of the hosts
//! overlaid on the fleet's merged one.

use plotters::prelude::*;

use crate::report::views::charts::{
    draw_lines, frame, max_of, placeholder, split_legend, svg, H, W,
};
use crate::stats::LatencyHistogram;

/// Bars get names under them only up to this many (the table names every row).
const LABELLED_BARS: usize = 30;
/// Distribution curves drawn besides the fleet's (corrupt and outlier rows first).
pub const MAX_CURVES: usize = 12;

/// How a bar is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// Found corruption: red.
    Corrupt,
    /// An outlier on this measure: orange.
    Outlier,
    /// Neither: blue.
    Normal,
}

/// One bar.
#[derive(Debug, Clone)]
pub struct Bar {
    /// "host (device)".
    pub label: String,
    /// Its height.
    pub value: f64,
    /// Its colour.
    pub mark: Mark,
}

fn colour(m: Mark) -> RGBColor {
    match m {
        Mark::Corrupt => RGBColor(200, 30, 30),
        Mark::Outlier => RGBColor(240, 140, 0),
        Mark::Normal => RGBColor(70, 110, 180),
    }
}

/// A bar per row, with the fleet median as a line.
pub fn bars(title: &str, y_label: &str, bars: &[Bar], median: Option<f64>) -> String {
    if bars.is_empty() {
        return placeholder(&format!("{title}: no data"));
    }
    let n = bars.len();
    svg(|out| {
        let root = SVGBackend::with_string(out, (W, H)).into_drawing_area();
        root.fill(&WHITE)?;
        let y_max = max_of(bars.iter().map(|b| b.value).chain(median));
        let mut chart =
            frame(&root, title, 70).build_cartesian_2d(-0.5f64..n as f64 - 0.5, 0f64..y_max)?;
        // Names fit under the bars only when there are few: cut to the room each bar has
        // (about 6.5 px a character); the table below names every row.
        let room = ((W - 90) as usize / n) * 10 / 65;
        let label = |x: &f64| {
            let i = x.round();
            if room < 4 || (x - i).abs() > 1e-6 || i < 0.0 {
                return String::new();
            }
            bars.get(i as usize)
                .map_or(String::new(), |b| fit(&b.label, room))
        };
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(n.min(LABELLED_BARS))
            .x_label_formatter(&label)
            .y_desc(y_label)
            .draw()?;
        chart.draw_series(bars.iter().enumerate().map(|(i, b)| {
            let x = i as f64;
            Rectangle::new(
                [(x - 0.4, 0.0), (x + 0.4, b.value)],
                colour(b.mark).filled(),
            )
        }))?;
        if let Some(m) = median {
            let line = vec![(-0.5, m), (n as f64 - 0.5, m)];
            chart
                .draw_series(LineSeries::new(line, BLACK.stroke_width(1)))?
                .label("fleet median")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK));
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()?;
        }
        root.present()?;
        Ok(())
    })
}

/// `s`, cut to `room` characters with an ellipsis.
fn fit(s: &str, room: usize) -> String {
    if s.chars().count() <= room {
        return s.to_string();
    }
    let head: String = s.chars().take(room.saturating_sub(1)).collect();
    format!("{head}…")
}

/// x of quantile q on the "nines" scale: 0 → 0, 0.9 → 1, 0.99 → 2, 0.999 → 3, 0.9999 → 4.
fn nines(q: f64) -> f64 {
    -(1.0 - q).max(1e-4).log10()
}

/// The latency (ms) of `h` at 81 points from 0 to 99.99 %.
fn curve(h: &LatencyHistogram) -> Vec<(f64, f64)> {
    (0..=80)
        .map(|i| {
            let x = i as f64 / 20.0;
            let q = 1.0 - 10f64.powf(-x);
            (nines(q), (h.value_at_quantile(q) as f64 / 1e6).max(1e-3))
        })
        .collect()
}

/// The latency distributions (latency at each quantile, log scale) of the named histograms.
pub fn distributions(title: &str, series: &[(String, &LatencyHistogram)]) -> String {
    let lines: Vec<(&str, Vec<(f64, f64)>)> = series
        .iter()
        .filter(|(_, h)| h.count() > 0)
        .map(|(n, h)| (n.as_str(), curve(h)))
        .collect();
    if lines.is_empty() {
        return placeholder(&format!(
            "{title}: no latency histograms (schema /2) to draw"
        ));
    }
    let ys = || lines.iter().flat_map(|(_, p)| p.iter().map(|p| p.1));
    let y_max = max_of(ys());
    let y_min = (ys().fold(f64::MAX, f64::min) / 2.0).clamp(1e-3, y_max / 10.0);
    svg(|out| {
        let root = SVGBackend::with_string(out, (W, H + 80)).into_drawing_area();
        root.fill(&WHITE)?;
        let (plot, legend) = split_legend(&root);
        let mut chart = frame(&plot, title, 60)
            .build_cartesian_2d(0f64..4.05f64, (y_min..y_max).log_scale())?;
        let label = |x: &f64| match x.round() as i64 {
            0 => "0 %".to_string(),
            1 => "90 %".to_string(),
            2 => "99 %".to_string(),
            3 => "99.9 %".to_string(),
            4 => "99.99 %".to_string(),
            _ => String::new(),
        };
        chart
            .configure_mesh()
            .x_labels(5)
            .x_label_formatter(&label)
            .x_desc("percentile")
            .y_desc("latency (ms, log)")
            .draw()?;
        draw_lines(&mut chart, &legend, &lines, false)?;
        root.present()?;
        Ok(())
    })
}
