//! The SVGs are well-formed, carry the series of the data they were drawn from, come
//! out byte-identical for the same data, and bad data is refused with a one-line error.

use crate::fixtures;

use std::path::Path;

use fairsim_plot::data::{Bar, CpuGroup, LatencyCdf, MetricBars, NewidleSeries, Slice, SliceKind};
use fairsim_plot::{write_all, PlotData, PlotError};
use fixtures::{sample, temp_dir, temp_path};

/// What the tests look at in one SVG.
struct Svg {
    text: String,
}

impl Svg {
    fn read(path: &Path) -> Svg {
        let text = std::fs::read_to_string(path).expect("read svg");
        let doc = roxmltree::Document::parse(&text).expect("well-formed XML");
        assert_eq!(
            doc.root_element().tag_name().name(),
            "svg",
            "{}",
            path.display()
        );
        assert!(doc.root_element().attribute("viewBox").is_some());
        Svg { text }
    }

    fn doc(&self) -> roxmltree::Document<'_> {
        roxmltree::Document::parse(&self.text).expect("parsed once already")
    }

    /// The trimmed content of every `<text>`.
    fn texts(&self) -> Vec<String> {
        self.doc()
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .map(|n| n.text().unwrap_or("").trim().to_string())
            .collect()
    }

    fn has_text(&self, s: &str) -> bool {
        self.texts().iter().any(|t| t == s)
    }

    /// Elements named `tag` whose attribute `attr` is `value`.
    fn count(&self, tag: &str, attr: &str, value: &str) -> usize {
        self.doc()
            .descendants()
            .filter(|n| n.has_tag_name(tag) && n.attribute(attr) == Some(value))
            .count()
    }

    fn count_tag(&self, tag: &str) -> usize {
        self.doc()
            .descendants()
            .filter(|n| n.has_tag_name(tag))
            .count()
    }

    /// Series lines of `color`: polylines two pixels wide (the series and its legend
    /// sample; axes and grid lines are one pixel wide).
    fn lines(&self, color: &str) -> usize {
        self.doc()
            .descendants()
            .filter(|n| {
                n.has_tag_name("polyline")
                    && n.attribute("stroke") == Some(color)
                    && n.attribute("stroke-width") == Some("2")
            })
            .count()
    }
}

const BLUE: &str = "#1F77B4";
const ORANGE: &str = "#FF7F0E";
const GREEN: &str = "#2CA02C";
const RED: &str = "#D62728";
const BLACK: &str = "#000000";

#[test]
fn every_plot_carries_its_series() {
    let dir = temp_dir("series");
    let paths = write_all(&sample(4, 5), &dir).expect("write_all");
    let names: Vec<_> = paths
        .iter()
        .map(|p| p.file_name().unwrap().to_str().unwrap().to_string())
        .collect();
    assert_eq!(
        names,
        [
            "latency-cdf.svg",
            "timeline.svg",
            "newidle.svg",
            "metrics.svg"
        ]
    );

    let cdf = Svg::read(&paths[0]);
    assert!(cdf.has_text("Wakeup latency: 4 CPUs, hackbench, baseline vs ILB_FAST"));
    // The bucket widths of the first series that records them.
    assert!(
        cdf.has_text(
            "buckets: 1 ns wide up to 2048 ns, then at most 0.0977% of the latency (HDR \
             histogram); 110 wakeups in all"
        ),
        "{:?}",
        cdf.texts()
    );
    assert!(
        cdf.has_text("baseline (p50 5 µs, p99 20 µs)"),
        "{:?}",
        cdf.texts()
    );
    assert!(cdf.has_text("ILB_FAST (p50 2 µs, p99 4 µs)"));
    assert!(cdf.has_text("wakeup latency (µs, log scale)"));
    assert!(cdf.has_text("fraction of wakeups"));
    assert!(cdf.has_text("p50") && cdf.has_text("p99"));
    // A line and its legend sample per series; a p50 and a p99 marker per series.
    assert_eq!(
        (cdf.lines(BLUE), cdf.lines(ORANGE), cdf.lines(GREEN)),
        (2, 2, 0)
    );
    assert_eq!(cdf.count_tag("circle"), 4);

    let tl = Svg::read(&paths[1]);
    // Each CPU has 5 task slices and one of each kernel kind; the legend adds a swatch
    // per kind and one per pid of each family (4 + 4).
    assert_eq!(tl.count("rect", "fill", RED), 4 + 1);
    assert_eq!(tl.count("rect", "fill", ORANGE), 4 + 1);
    assert_eq!(tl.count("rect", "fill", BLACK), 4 + 1);
    assert_eq!(tl.count_tag("rect"), 1 + 4 * 5 + 4 * 3 + 3 + 8);
    for t in [
        "newidle balance",
        "periodic/nohz balance",
        "rq lock spin",
        "hackbench (4 tasks, pids 1-4)",
        "kworker/u (4 tasks, pids 5-8)",
        "time from the window start (µs)",
        "CPU",
        "0",
        "3",
    ] {
        assert!(tl.has_text(t), "{t} in {:?}", tl.texts());
    }

    let ni = Svg::read(&paths[2]);
    // Two panels, each with a line and a legend sample per domain.
    assert_eq!(
        (ni.lines(BLUE), ni.lines(ORANGE), ni.lines(GREEN)),
        (4, 4, 4)
    );
    for t in [
        "time (ms)",
        "balances per 1 ms",
        "groups scanned per 1 ms",
        "buckets of 1 ms; one line per domain level, each bucket's count drawn at its middle",
    ] {
        assert!(ni.has_text(t), "{t}");
    }
    for d in ["d0 SMT", "d1 MC", "d2 NUMA"] {
        assert_eq!(ni.texts().iter().filter(|t| *t == d).count(), 2, "{d}");
    }

    let m = Svg::read(&paths[3]);
    assert!(m.has_text("Wakeup-99.0th-us (lower is better)"));
    assert!(m.has_text("throughput-ops (higher is better)"));
    // The table's mean change, starred and shaded as the table stars it; a metric without
    // a change says none.
    assert!(
        m.has_text("Amean: new *27.71%* significant"),
        "{:?}",
        m.texts()
    );
    assert_eq!(m.count("rect", "fill", "#FFF3C4"), 1);
    assert!(!m.texts().iter().any(|t| t.starts_with("Hmean")));
    // One error bar (three lines and a circle) per bar; a bar per metric and a legend
    // swatch per feature set.
    assert_eq!(m.count_tag("circle"), 4);
    assert_eq!(m.count("rect", "fill", BLUE), 3);
    assert_eq!(m.count("rect", "fill", ORANGE), 3);
    assert!(m.texts().iter().filter(|t| *t == "ILB_FAST").count() >= 3);
    let _ = std::fs::remove_dir_all(temp_path("series"));
}

#[test]
fn only_what_the_data_holds_is_drawn() {
    let dir = temp_dir("partial");
    let mut d = sample(4, 5);
    d.timeline = None;
    d.metrics.clear();
    let paths = write_all(&d, &dir).expect("write_all");
    assert_eq!(
        paths,
        [dir.join("latency-cdf.svg"), dir.join("newidle.svg")]
    );
    assert!(!dir.join("timeline.svg").exists());
    let empty = write_all(&PlotData::new("nothing"), &dir.join("empty")).expect("empty");
    assert!(empty.is_empty());
    let _ = std::fs::remove_dir_all(temp_path("partial"));
}

#[test]
fn the_timeline_fits_224_cpus_and_4() {
    let dir = temp_dir("big");
    let mut big = sample(224, 40);
    let t = big.timeline.as_mut().unwrap();
    assert_eq!(t.slices.len(), 224 * 43);
    // Two LLCs of 112 CPUs, each a package's cores and their SMT siblings.
    t.groups = (0..2u32)
        .map(|p| CpuGroup {
            name: format!("LLC {p}"),
            cpus: (p * 56..p * 56 + 56)
                .chain(112 + p * 56..112 + p * 56 + 56)
                .collect(),
        })
        .collect();
    let paths = write_all(&big, &dir).expect("224 CPUs");
    let size = std::fs::metadata(&paths[1]).unwrap().len();
    assert!(size < 2_000_000, "{size} bytes");
    let tl = Svg::read(&paths[1]);
    // Rows of 7 CPUs within each LLC (32 in all), labelled with their LLC and CPUs, the
    // bucket width stated, and the task families named.
    assert!(
        tl.has_text("LLC 0: 0-6") && tl.has_text("LLC 1: 217-223"),
        "{:?}",
        tl.texts()
    );
    assert!(tl
        .texts()
        .iter()
        .any(|t| t.starts_with("Timeline by LLC, 1000 to 2000 µs")));
    assert!(
        tl.texts()
            .iter()
            .any(|t| t.contains("224 CPUs in 32 rows of 7 CPUs") && t.contains("buckets of 5 µs")),
        "{:?}",
        tl.texts()
    );
    assert!(tl.has_text("hackbench (4 tasks, pids 1-4)"));
    // Every row had a newidle balance: a red share in some bucket of each row, plus the
    // legend's swatch.
    assert!(tl.count("rect", "fill", RED) > 32);
    // A full bucket of one row is the row's height less its inset: shares never pass it.
    let doc = tl.doc();
    let max_h = doc
        .descendants()
        .filter(|n| n.has_tag_name("rect") && n.attribute("fill") == Some(BLUE))
        .filter_map(|n| n.attribute("height")?.parse::<f64>().ok())
        .fold(0.0f64, f64::max);
    assert!((1.0..=30.0).contains(&max_h), "{max_h}");

    // Without groups (an older file), rows are runs of consecutive CPUs.
    big.timeline.as_mut().unwrap().groups.clear();
    let tl = Svg::read(&write_all(&big, &temp_dir("big-nogroups")).unwrap()[1]);
    assert!(tl.has_text("0-3"), "{:?}", tl.texts());
    assert!(tl.texts().iter().any(|t| t.starts_with("Timeline by CPUs")));

    // 4 CPUs keep a row each, tall, with their pids written in the slices.
    let small = Svg::read(&write_all(&sample(4, 5), &temp_dir("small")).unwrap()[1]);
    let doc = small.doc();
    let h4: f64 = doc
        .descendants()
        .rfind(|n| n.has_tag_name("rect") && n.attribute("fill") == Some(RED))
        .and_then(|n| n.attribute("height")?.parse().ok())
        .unwrap();
    assert!(h4 > 100.0, "{h4}");
    assert!(
        small.has_text("1") && small.has_text("8"),
        "{:?}",
        small.texts()
    );
    for name in ["big", "big-nogroups", "small"] {
        let _ = std::fs::remove_dir_all(temp_path(name));
    }
}

#[test]
fn the_same_data_gives_the_same_bytes() {
    let (a, b) = (temp_dir("same-a"), temp_dir("same-b"));
    let pa = write_all(&sample(8, 7), &a).unwrap();
    let pb = write_all(&sample(8, 7), &b).unwrap();
    assert_eq!(pa.len(), 4);
    for (x, y) in pa.iter().zip(&pb) {
        assert_eq!(
            std::fs::read(x).unwrap(),
            std::fs::read(y).unwrap(),
            "{x:?}"
        );
    }
    for name in ["same-a", "same-b"] {
        let _ = std::fs::remove_dir_all(temp_path(name));
    }
}

#[test]
fn edge_cases_draw() {
    let dir = temp_dir("edges");
    let mut d = PlotData::new("edges");
    // A single step at 0 ns, one bar, an empty timeline, domains without buckets.
    d.latency = vec![LatencyCdf {
        label: "zero".into(),
        total: 3,
        points: vec![(0, 3)],
        buckets: None,
    }];
    let mut t = sample(1, 0).timeline.unwrap();
    t.slices.clear();
    t.tasks.clear();
    d.timeline = Some(t);
    d.newidle = Some(NewidleSeries {
        start_ns: 0,
        bucket_ns: 1,
        domains: Vec::new(),
    });
    d.metrics = vec![MetricBars {
        name: "zero".into(),
        higher_better: true,
        sets: vec![Bar {
            label: "a very long feature set name indeed".into(),
            mean: 0.0,
            stddev: 0.0,
            n: 1,
        }],
        change: None,
    }];
    let paths = write_all(&d, &dir).expect("edges draw");
    assert_eq!(paths.len(), 4);
    for p in &paths {
        Svg::read(p);
    }
    let _ = std::fs::remove_dir_all(temp_path("edges"));
}

/// Asserts `err` is one line naming `field`.
fn assert_names(err: PlotError, field: &str) {
    let s = err.to_string();
    assert_eq!(s.lines().count(), 1, "{s}");
    assert!(s.contains(field), "{field} not in: {s}");
}

#[test]
fn bad_data_is_refused_naming_the_field() {
    let dir = temp_dir("bad");
    let refuse = |d: &PlotData, field: &str| {
        assert_names(d.validate().unwrap_err(), field);
        assert_names(write_all(d, &dir).unwrap_err(), field);
    };
    let mut d = sample(4, 5);
    let t = d.timeline.as_mut().unwrap();
    t.slices[0].end_ns = t.slices[0].start_ns;
    refuse(&d, "timeline.slices[0].end_ns");

    let mut d = sample(4, 5);
    d.timeline.as_mut().unwrap().slices[2].cpu = 4;
    refuse(
        &d,
        "timeline.slices[2].cpu: invalid value '4'; allowed: 0..4",
    );

    let mut d = sample(4, 5);
    d.metrics[1].sets[0].mean = f64::NAN;
    refuse(&d, "metrics[1].sets[0].mean");

    let mut d = sample(4, 5);
    d.metrics[0].sets[1].stddev = -1.0;
    refuse(&d, "metrics[0].sets[1].stddev");

    let mut d = sample(4, 5);
    d.latency[0].points[1].0 = 0;
    refuse(&d, "latency[0].points[1]");

    let mut d = sample(4, 5);
    d.latency[1].total = 11;
    refuse(&d, "latency[1].total");

    let mut d = sample(4, 5);
    d.newidle.as_mut().unwrap().domains[1].groups.pop();
    refuse(&d, "newidle.domains[1].groups");

    let mut d = sample(4, 5);
    d.newidle.as_mut().unwrap().bucket_ns = 0;
    refuse(&d, "newidle.bucket_ns");

    let mut d = sample(4, 5);
    let t = d.timeline.as_mut().unwrap();
    let s = Slice {
        cpu: 0,
        start_ns: t.start_ns,
        end_ns: t.start_ns + 1,
        kind: SliceKind::Newidle,
        pid: 0,
    };
    t.slices = vec![s; fairsim_plot::MAX_SLICES + 1];
    refuse(
        &d,
        "timeline.slices: 500001 slices; allowed: at most 500000",
    );
    // Nothing was written for refused data.
    assert!(!dir.exists());
    let _ = std::fs::remove_dir_all(temp_path("bad"));
}

#[test]
fn the_data_file_round_trips_and_is_checked() {
    let dir = temp_dir("file");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("plot-data.json");
    let d = sample(4, 5);
    fairsim_plot::write_data(&d, &path).unwrap();
    assert_eq!(fairsim_plot::read_data(&path).unwrap(), d);

    let text = std::fs::read_to_string(&path).unwrap();
    let write = |name: &str, s: &str| {
        let p = dir.join(name);
        std::fs::write(&p, s).unwrap();
        p
    };
    let read_err = |p: &Path| fairsim_plot::read_data(p).unwrap_err();

    let p = write("format.json", &text.replace("fairsim-plot-data", "other"));
    let e = read_err(&p);
    assert_names(
        e,
        "format.json: format: invalid value '\"other\"'; allowed: fairsim-plot-data",
    );

    let p = write(
        "version.json",
        &text.replace("\"version\": 1", "\"version\": 2"),
    );
    assert_names(
        read_err(&p),
        "version.json: version: invalid value '2'; allowed: 1",
    );

    let mut bad = d.clone();
    bad.timeline.as_mut().unwrap().slices[0].end_ns = 0;
    // As another program might write it: `write_data` would refuse it.
    let json = serde_json::to_string(&bad).unwrap();
    let p = write("slice.json", &json);
    assert_names(read_err(&p), "slice.json: timeline.slices[0].end_ns");

    let p = write("garbage.json", "{ not json");
    assert_names(read_err(&p), "garbage.json: not a plot data file");
    let p = write("array.json", "[1, 2]");
    assert_names(read_err(&p), "array.json: format: missing");
    assert_names(read_err(&dir.join("missing.json")), "missing.json");
    assert_names(read_err(&dir), "not a regular file");

    // Writing refuses invalid data too, and names an unwritable path.
    assert_names(
        fairsim_plot::write_data(&bad, &dir.join("x.json")).unwrap_err(),
        "timeline.slices[0].end_ns",
    );
    let e = fairsim_plot::write_data(&d, &dir.join("no/such/dir/x.json")).unwrap_err();
    assert!(e.is_output());
    assert_names(e, "cannot write");
    let _ = std::fs::remove_dir_all(temp_path("file"));
}
