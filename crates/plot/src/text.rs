//! Text measured with a font's metrics, so that every title, note and legend fits the
//! picture: plotters' own estimate (0.56 em a byte, without its `ttf` feature) is too
//! small for capitals and too large for `µ`, and a title it lays out can run off both
//! edges of the SVG.
//!
//! The widths are DejaVu Sans' advances: the face most Linux viewers pick for the SVG's
//! `sans-serif`, and wider than Helvetica or Arial, so a text that fits here fits there.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::canvas::{Area, DrawResult, FONT};

/// DejaVu Sans' advance widths of the printable ASCII characters (`' '` to `'~'`), in
/// thousandths of an em, read from the font's `hmtx` table (2048 units an em).
const ASCII_ADVANCE: [u16; 95] = [
    318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337, 636, 636, 636,
    636, 636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 531, 1000, 684, 686, 698, 770, 632,
    575, 775, 752, 295, 295, 656, 557, 863, 748, 787, 603, 787, 695, 635, 611, 732, 684, 989, 685,
    611, 685, 390, 337, 390, 838, 500, 500, 613, 635, 550, 635, 615, 352, 635, 634, 278, 278, 579,
    278, 974, 634, 612, 635, 635, 411, 521, 392, 634, 592, 818, 592, 592, 525, 636, 337, 636, 838,
];

/// The size of a text's title lines (plotters' font size).
pub(crate) const TITLE: u32 = 20;
/// The size of notes under the title (bucket widths, what the marks mean).
pub(crate) const NOTE: u32 = 14;

/// One character's advance in thousandths of an em: the table for ASCII, DejaVu Sans'
/// advances for the few other characters the plots write, and a full em for anything
/// else, so that an unknown character can only make a text look wider than it is.
fn advance(c: char) -> u32 {
    match c {
        ' '..='~' => u32::from(ASCII_ADVANCE[c as usize - 32]),
        'µ' => 636,
        '·' => 318,
        '–' => 500,
        '±' | '×' | '≤' | '≥' | '−' => 838,
        _ => 1000,
    }
}

/// The pixel size plotters' SVG backend writes for a font of `size`: it divides by 1.24.
pub(crate) fn svg_px(size: u32) -> f64 {
    f64::from(size) / 1.24
}

/// The height of one line of text of `size`, in pixels, with the usual 1.25 leading.
pub(crate) fn line_height(size: u32) -> i32 {
    (svg_px(size) * 1.25).ceil() as i32
}

/// The width of `text` drawn at plotters' font size `size`, in pixels.
pub(crate) fn width(text: &str, size: u32) -> f64 {
    let em: u32 = text.chars().map(advance).sum();
    f64::from(em) / 1000.0 * svg_px(size)
}

/// `text` cut to fit `max_w` pixels at `size`, ending in `…` when cut.
pub(crate) fn fit(text: &str, size: u32, max_w: f64) -> String {
    if width(text, size) <= max_w {
        return text.to_string();
    }
    let mut out = String::new();
    for c in text.chars() {
        out.push(c);
        if width(&out, size) + width("…", size) > max_w {
            out.pop();
            break;
        }
    }
    format!("{}…", out.trim_end())
}

/// `text` broken into at most `max_lines` lines of at most `max_w` pixels at `size`:
/// after a space or a comma where possible, inside a word where not, and the last line
/// shortened with `…` when the text does not fit in all.
pub(crate) fn wrap(text: &str, size: u32, max_w: f64, max_lines: usize) -> Vec<String> {
    // Pieces end after a space or a comma: the places a line may break.
    let mut pieces: Vec<String> = Vec::new();
    let mut cur = String::new();
    for c in text.chars() {
        cur.push(c);
        if c == ' ' || c == ',' {
            pieces.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        pieces.push(cur);
    }
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for piece in pieces {
        let joined = format!("{line}{piece}");
        if width(joined.trim_end(), size) <= max_w {
            line = joined;
            continue;
        }
        if !line.trim().is_empty() {
            lines.push(line.trim_end().to_string());
        }
        line = String::new();
        // A piece wider than a line is broken where it reaches the edge.
        for c in piece.chars() {
            line.push(c);
            if width(line.trim_end(), size) > max_w {
                line.pop();
                lines.push(line.trim_end().to_string());
                line = c.to_string();
            }
        }
    }
    if !line.trim().is_empty() {
        lines.push(line.trim_end().to_string());
    }
    if lines.len() > max_lines.max(1) {
        let rest = lines.split_off(max_lines.max(1) - 1).join(" ");
        lines.push(fit(&rest, size, max_w));
    }
    lines
}

/// Draws a title (up to two lines) and notes (up to two lines each) centred across
/// `width` pixels from the top of `area`, each fitted to the width less `margin` on
/// both sides, and returns the y below the last line.
pub(crate) fn header(area: &Area, title: &str, notes: &[String], width_px: u32) -> DrawResult<i32> {
    let margin = 10.0;
    let max_w = f64::from(width_px) - 2.0 * margin;
    let centre = width_px as i32 / 2;
    let mut y = 8;
    for (text, size, max_lines) in
        std::iter::once((title, TITLE, 2)).chain(notes.iter().map(|n| (n.as_str(), NOTE, 2)))
    {
        let style =
            TextStyle::from((FONT, size).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
        for line in wrap(text, size, max_w, max_lines) {
            area.draw(&Text::new(line, (centre, y), style.clone()))?;
            y += line_height(size);
        }
        y += 2;
    }
    Ok(y + 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_follow_the_font() {
        // "M" is wider than "i" in every proportional face.
        assert!(width("MMMM", 20) > 2.0 * width("iiii", 20));
        // 1000 thousandths of an em at plotters' size 31 is a 25 px font.
        assert!((width("…", 31) - 25.0).abs() < 1e-9);
    }

    #[test]
    fn wrapped_lines_fit_and_keep_the_words() {
        let t = "spr-2s56c2t (224 CPUs), nanosleep:tasks=224,sleep=1us,run=1us,launch=100us,exec=350us: wakeup latency";
        let lines = wrap(t, 20, 600.0, 3);
        assert!(lines.len() > 1, "{lines:?}");
        assert!(lines.iter().all(|l| width(l, 20) <= 600.0), "{lines:?}");
        assert_eq!(lines.concat().replace(' ', ""), t.replace(' ', ""));
        let one = wrap(t, 20, 300.0, 1);
        assert_eq!(one.len(), 1);
        assert!(
            one[0].ends_with('…') && width(&one[0], 20) <= 300.0,
            "{one:?}"
        );
    }

    #[test]
    fn a_short_text_is_left_alone() {
        assert_eq!(fit("p50", 13, 100.0), "p50");
        assert_eq!(wrap("metrics", 20, 500.0, 2), vec!["metrics".to_string()]);
    }
}
