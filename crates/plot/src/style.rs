//! What every plot shares: the palettes, the SVG rendering wrapper, text measured with a
//! font's metrics (so that titles are wrapped or shortened to fit the picture), a
//! hand-drawn legend row and header, and number formatting that does not depend on
//! floating-point noise.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::canvas::{Area, DrawResult, FONT};
use crate::error::PlotError;

/// Colours of series (lines, bars), in the order series appear: Tableau 10, chosen
/// because they stay distinct for most colour-blind readers.
pub(crate) const SERIES: [RGBColor; 10] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x7f, 0x7f, 0x7f),
    RGBColor(0xbc, 0xbd, 0x22),
    RGBColor(0x17, 0xbe, 0xcf),
];

/// The colour of series `i`.
pub(crate) fn series_color(i: usize) -> RGBColor {
    SERIES[i % SERIES.len()]
}

/// Task colours on the timeline, by `pid % 16`. None of them is red, orange or black,
/// which belong to the kernel's own work ([`NEWIDLE`], [`BALANCE`], [`LOCK_SPIN`]).
pub(crate) const TASKS: [RGBColor; 16] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x17, 0xbe, 0xcf),
    RGBColor(0xbc, 0xbd, 0x22),
    RGBColor(0x7f, 0x7f, 0x7f),
    RGBColor(0xae, 0xc7, 0xe8),
    RGBColor(0x98, 0xdf, 0x8a),
    RGBColor(0xc5, 0xb0, 0xd5),
    RGBColor(0xc4, 0x9c, 0x94),
    RGBColor(0xf7, 0xb6, 0xd2),
    RGBColor(0x9e, 0xda, 0xe5),
    RGBColor(0xdb, 0xdb, 0x8d),
    RGBColor(0x39, 0x3b, 0x79),
];

/// The colour of task `pid` on the timeline.
pub(crate) fn task_color(pid: u32) -> RGBColor {
    TASKS[pid as usize % TASKS.len()]
}

/// `sched_balance_newidle` on the timeline.
pub(crate) const NEWIDLE: RGBColor = RGBColor(0xd6, 0x27, 0x28);
/// Periodic and nohz idle balances on the timeline.
pub(crate) const BALANCE: RGBColor = RGBColor(0xff, 0x7f, 0x0e);
/// Spinning on a runqueue lock on the timeline.
pub(crate) const LOCK_SPIN: RGBColor = RGBColor(0x00, 0x00, 0x00);

/// Light grey of reference lines (p50, p99).
pub(crate) const GUIDE: RGBColor = RGBColor(0x99, 0x99, 0x99);

/// Draws an SVG of `size` with `draw` and returns its text. `file` names the plot in the
/// error, which can only be a bug: the data was validated and the ranges guarded.
pub(crate) fn render(
    file: &str,
    size: (u32, u32),
    draw: impl FnOnce(&Area) -> DrawResult,
) -> Result<String, PlotError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        let fail = |e: DrawingAreaErrorKind<std::io::Error>| PlotError::Draw {
            file: file.into(),
            reason: e.to_string(),
        };
        root.fill(&WHITE).map_err(fail)?;
        draw(&root).map_err(fail)?;
        root.present().map_err(fail)?;
    }
    Ok(svg)
}

/// One entry of a hand-drawn legend: the swatches and the text after them.
pub(crate) struct Entry {
    /// The swatch colours (a comm run by several pids shows one swatch per pid).
    pub colors: Vec<RGBColor>,
    /// The text.
    pub text: String,
}

/// Draws `entries` left to right from `(x, y)`, wrapping before `right`, and returns the
/// y below the last row. plotters' own legend sits inside the plotting area and would
/// hide the timeline's rows, so these legends sit above it.
pub(crate) fn legend_rows(
    area: &Area,
    entries: &[Entry],
    (x0, y0): (i32, i32),
    right: i32,
) -> DrawResult<i32> {
    const ROW: i32 = 18;
    const SWATCH: i32 = 12;
    let style = TextStyle::from((FONT, 13).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    let (mut x, mut y) = (x0, y0);
    for e in entries {
        // The naive font's width estimate (0.55 em a character) is enough to space
        // entries; the SVG viewer lays the text out itself.
        let text_w = (e.text.chars().count() as i32) * 7;
        let w = e.colors.len() as i32 * (SWATCH + 2) + 4 + text_w + 16;
        if x > x0 && x + w > right {
            x = x0;
            y += ROW;
        }
        for (k, c) in e.colors.iter().enumerate() {
            let sx = x + k as i32 * (SWATCH + 2);
            area.draw(&Rectangle::new(
                [(sx, y - SWATCH / 2), (sx + SWATCH, y + SWATCH / 2)],
                c.filled(),
            ))?;
        }
        let tx = x + e.colors.len() as i32 * (SWATCH + 2) + 4;
        area.draw(&Text::new(e.text.clone(), (tx, y), style.clone()))?;
        x += w;
    }
    Ok(y + ROW)
}

/// Draws a boxed legend of line swatches whose lower right corner is `(right, bottom)` in
/// `area`'s pixels, sized by the texts' measured widths (plotters' own legend box is sized
/// by its estimate, which capitals overflow). Texts are drawn as given: fit them first.
pub(crate) fn legend_box(
    area: &Area,
    items: &[(RGBColor, String)],
    (right, bottom): (i32, i32),
) -> DrawResult {
    const SIZE: u32 = 13;
    let row = crate::text::line_height(SIZE) + 2;
    let text_w = items
        .iter()
        .map(|(_, t)| crate::text::width(t, SIZE))
        .fold(0.0f64, f64::max)
        .ceil() as i32;
    let (w, h) = (text_w + 44, row * items.len() as i32 + 8);
    let (x0, y0) = (right - w, bottom - h);
    area.draw(&Rectangle::new(
        [(x0, y0), (right, bottom)],
        WHITE.mix(0.85).filled(),
    ))?;
    area.draw(&Rectangle::new(
        [(x0, y0), (right, bottom)],
        BLACK.stroke_width(1),
    ))?;
    let style = TextStyle::from((FONT, SIZE).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for (i, (color, text)) in items.iter().enumerate() {
        let y = y0 + 4 + row * i as i32 + row / 2;
        area.draw(&PathElement::new(
            [(x0 + 8, y), (x0 + 30, y)],
            color.stroke_width(2),
        ))?;
        area.draw(&Text::new(text.clone(), (x0 + 36, y), style.clone()))?;
    }
    Ok(())
}

/// A number for an axis label with at most `sig` significant digits and no trailing
/// zeros, so that a tick computed as 0.30000000000000004 reads 0.3.
pub(crate) fn fmt_num(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v.is_finite() {
            "0".into()
        } else {
            v.to_string()
        };
    }
    let mag = v.abs().log10().floor() as i32;
    let decimals = (2 - mag).clamp(0, 9) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A linear axis range `[lo, hi]` that contains every value of `values` and 0, with 10%
/// headroom, never empty or degenerate (plotters divides by its width).
pub(crate) fn linear_range(values: impl IntoIterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (0.0f64, 0.0f64);
    for v in values {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if hi - lo <= 0.0 {
        return (lo, lo + 1.0);
    }
    let pad = (hi - lo) * 0.1;
    (if lo < 0.0 { lo - pad } else { lo }, hi + pad)
}

/// A logarithmic axis range of whole decades containing every positive value, or
/// `[1, 10]` when there is none.
pub(crate) fn log_range(values: impl IntoIterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for v in values.into_iter().filter(|v| *v > 0.0 && v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if hi <= 0.0 {
        return (1.0, 10.0);
    }
    let lo = 10f64.powf(lo.log10().floor());
    let mut hi = 10f64.powf(hi.log10().ceil());
    if hi <= lo {
        hi = lo * 10.0;
    }
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_written() {
        assert_eq!(fmt_num(0.30000000000000004), "0.3");
        assert_eq!(fmt_num(1000.0), "1000");
        assert_eq!(fmt_num(12.5), "12.5");
        assert_eq!(fmt_num(0.0), "0");
        assert_eq!(fmt_num(-2.0), "-2");
        assert_eq!(fmt_num(0.001), "0.001");
    }

    #[test]
    fn ranges_are_never_empty() {
        assert_eq!(linear_range([0.0, 0.0]), (0.0, 1.0));
        assert_eq!(linear_range([]), (0.0, 1.0));
        assert_eq!(log_range([]), (1.0, 10.0));
        assert_eq!(log_range([5.0]), (1.0, 10.0));
        assert_eq!(log_range([10.0]), (10.0, 100.0));
        assert_eq!(log_range([0.2, 300.0]), (0.1, 1000.0));
    }
}
