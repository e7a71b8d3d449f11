//! `lb-scan.svg` from a criterion output directory.

use crate::fixtures;

use fairsim_plot::criterion::{read_group, LB_SCAN_GROUP};
use fixtures::{fake_criterion, temp_dir};

#[test]
fn lb_scan_has_a_line_and_error_bars_per_feature() {
    let dir = temp_dir("criterion");
    let input = dir.join("target").join("criterion");
    fake_criterion(&input);
    let est = read_group(&input, LB_SCAN_GROUP).expect("read");
    assert_eq!(est.len(), 12);
    let first = &est[0];
    assert_eq!((first.function.as_str(), first.param), ("ILB_FAST", 8.0));

    // A cargo target directory is accepted too.
    let out = dir.join("out");
    let paths = fairsim_plot::write_criterion(&dir.join("target"), &out).expect("write");
    assert_eq!(paths, [out.join("lb-scan.svg")]);
    let text = std::fs::read_to_string(&paths[0]).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("well-formed");
    let texts: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(str::trim))
        .collect();
    for t in [
        "baseline",
        "ILB_UTIL",
        "ILB_FAST",
        "groups in the domain (log scale)",
        "time (ns, log scale)",
    ] {
        assert!(texts.contains(&t), "{t} in {texts:?}");
    }
    // baseline first: the first series colour.
    let lines = |color: &str| {
        doc.descendants()
            .filter(|n| {
                n.has_tag_name("polyline")
                    && n.attribute("stroke") == Some(color)
                    && n.attribute("stroke-width") == Some("2")
            })
            .count()
    };
    assert_eq!(
        (lines("#1F77B4"), lines("#FF7F0E"), lines("#2CA02C")),
        (2, 2, 2)
    );
    // One error bar (a circle at the mean) per benchmark.
    let circles = doc
        .descendants()
        .filter(|n| n.has_tag_name("circle"))
        .count();
    assert_eq!(circles, 12);
    // Same input, same bytes.
    let again = fairsim_plot::write_criterion(&input, &dir.join("again")).unwrap();
    assert_eq!(std::fs::read(&again[0]).unwrap(), text.as_bytes());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_directory_without_the_group_is_named() {
    let dir = temp_dir("criterion-missing");
    std::fs::create_dir_all(dir.join("other group")).unwrap();
    let err = fairsim_plot::write_criterion(&dir, &dir.join("out")).unwrap_err();
    let s = err.to_string();
    assert_eq!(s.lines().count(), 1, "{s}");
    assert!(s.contains("update_sd_lb_stats newidle MC"), "{s}");
    assert!(s.contains(&dir.display().to_string()), "{s}");
    assert!(!dir.join("out").exists());

    // A broken estimate names its file and field.
    fake_criterion(&dir);
    let est = dir.join("update_sd_lb_stats newidle MC/ILB_UTIL/32/new/estimates.json");
    let text = std::fs::read_to_string(&est).unwrap();
    std::fs::write(
        &est,
        text.replacen("\"point_estimate\":704", "\"point_estimate\":-1", 1),
    )
    .unwrap();
    let s = fairsim_plot::write_criterion(&dir, &dir.join("out"))
        .unwrap_err()
        .to_string();
    assert!(s.contains("estimates.json: mean.point_estimate"), "{s}");
    std::fs::write(&est, "{").unwrap();
    let s = fairsim_plot::write_criterion(&dir, &dir.join("out"))
        .unwrap_err()
        .to_string();
    assert!(s.contains("not criterion's JSON"), "{s}");
    let _ = std::fs::remove_dir_all(&dir);
}
