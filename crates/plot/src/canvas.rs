//! The surface every plot draws on and the font family of its texts.
//!
//! They are apart from `style` because both `style` (legends, headers) and `text` (text
//! measured and drawn to fit) draw on the surface, and `style` measures its legends with
//! `text`: with the surface in `style`, each imported the other.

use plotters::coord::Shift;
use plotters::prelude::*;

/// The drawing area every plot draws on: an SVG written into a `String`.
pub(crate) type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// What plotters' calls return when drawing into a string.
pub(crate) type DrawResult<T = ()> = Result<T, DrawingAreaErrorKind<std::io::Error>>;

/// The font family of every text: the viewer picks a sans-serif face, since the SVG
/// names the family and no font file is read or embedded.
pub(crate) const FONT: &str = "sans-serif";
