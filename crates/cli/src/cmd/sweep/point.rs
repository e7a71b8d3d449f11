//! A point's index, coordinates and command line: a leaf that `plan.rs`, which expands the
//! points, and `output.rs`, which writes them, share.

/// Digits of a point's index in its file name: at least 4, enough for every point.
pub(crate) fn index_width(total: usize) -> usize {
    total.saturating_sub(1).to_string().len().max(4)
}

/// The value index on each axis of point `index`, the last axis (seeds) varying fastest.
pub(crate) fn coordinates(mut index: usize, lens: &[usize]) -> Vec<usize> {
    let mut coords = vec![0; lens.len()];
    for (c, &n) in coords.iter_mut().zip(lens).rev() {
        *c = index % n.max(1);
        index /= n.max(1);
    }
    coords
}

/// `argv` as one shell command line after `fairsim run`, quoting what a shell would
/// split or expand.
pub(crate) fn command_line(argv: &[String]) -> String {
    let mut out = String::from("fairsim run");
    for a in argv {
        out.push(' ');
        let plain = !a.is_empty()
            && a.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_./:=,+@%-".contains(c));
        if plain {
            out.push_str(a);
        } else {
            out.push('\'');
            out.push_str(&a.replace('\'', "'\\''"));
            out.push('\'');
        }
    }
    out
}
