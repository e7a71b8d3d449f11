//! `frequency.svg`: drawn only when the data has a frequency series, naming every
//! policy; bad series are refused naming the field; the data file keeps the series and
//! reads files written without one.

use crate::fixtures;

use fairsim_plot::data::{FrequencySeries, PolicyFrequency};
use fairsim_plot::{read_data, write_all, write_data, PlotData};
use fixtures::{temp_dir, temp_path};

fn ramp() -> FrequencySeries {
    FrequencySeries {
        start_ns: 0,
        end_ns: 800_000_000,
        policies: vec![
            PolicyFrequency {
                name: "policy0 (CPUs 0-3)".into(),
                steps: vec![(0, 1_416_000)],
            },
            PolicyFrequency {
                name: "policy4 (CPUs 4-5)".into(),
                steps: vec![
                    (0, 1_800_000),
                    (400_000_000, 816_000),
                    (452_000_000, 1_008_000),
                    (476_000_000, 1_416_000),
                ],
            },
        ],
    }
}

#[test]
fn the_frequency_plot_names_every_policy_and_only_comes_with_a_series() {
    let dir = temp_dir("freq-draw");
    let plain = PlotData::new("rk3399");
    let none = write_all(&plain, &dir).unwrap();
    assert!(
        none.iter().all(|p| !p.ends_with("frequency.svg")),
        "{none:?}"
    );
    let mut data = PlotData::new("rk3399");
    data.frequency = Some(ramp());
    let paths = write_all(&data, &dir).unwrap();
    let svg = paths
        .iter()
        .find(|p| p.ends_with("frequency.svg"))
        .expect("frequency.svg written");
    let text = std::fs::read_to_string(svg).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("well-formed SVG");
    let texts: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .collect();
    for name in [
        "policy0 (CPUs 0-3)",
        "policy4 (CPUs 4-5)",
        "frequency (MHz)",
    ] {
        assert!(
            texts.iter().any(|t| t.contains(name)),
            "{name} not in {texts:?}"
        );
    }
    // The same data draws the same bytes.
    let again = write_all(&data, &temp_dir("freq-draw-2")).unwrap();
    let other = again.iter().find(|p| p.ends_with("frequency.svg")).unwrap();
    assert_eq!(std::fs::read(other).unwrap(), text.into_bytes());
}

/// A field a broken series must be refused for, and how to break it.
type Breakage = (&'static str, fn(&mut FrequencySeries));

#[test]
fn bad_series_are_refused_naming_the_field() {
    let cases: [Breakage; 5] = [
        ("frequency.end_ns", |f| f.end_ns = f.start_ns),
        ("frequency.policies", |f| f.policies.clear()),
        ("frequency.policies[1].steps[2]", |f| {
            f.policies[1].steps[2].0 = 1
        }),
        ("frequency.policies[1].steps[3]", |f| {
            f.policies[1].steps[3].1 = 0
        }),
        ("frequency.policies[0].steps", |f| {
            f.policies[0].steps.clear()
        }),
    ];
    for (field, break_it) in cases {
        let mut data = PlotData::new("bad");
        let mut f = ramp();
        break_it(&mut f);
        data.frequency = Some(f);
        let e = write_all(&data, &temp_dir("freq-bad"))
            .unwrap_err()
            .to_string();
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.contains(field), "{field} not in: {e}");
    }
}

#[test]
fn the_data_file_keeps_the_series_and_reads_files_without_one() {
    let mut data = PlotData::new("rk3399");
    data.frequency = Some(ramp());
    let path = temp_path("freq-data.json");
    write_data(&data, &path).unwrap();
    assert_eq!(read_data(&path).unwrap(), data);
    let plain = PlotData::new("smp");
    write_data(&plain, &path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("frequency"), "{text}");
    assert_eq!(read_data(&path).unwrap().frequency, None);
}
