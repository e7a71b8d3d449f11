//! Task groups as a run's options and scenario declare them, read from text: `--cgroup
//! '/PATH:KEY=V,...'` and a scenario's `[cgroup."/PATH"]` tables, each declaration's
//! writes parsed (as cgroupfs would take them) into the engine's
//! [`fairsim_engine::cgroup::Declared`] and added to its [`Cgroups`] tree.

use std::collections::BTreeMap;

use fairsim_engine::cgroup::{
    check_declared_path, BandwidthWrite, Cgroups, CpuWeight, CpusetWrites, Declared, KeyError,
    Origin, Partition, Writes,
};
use fairsim_engine::error::{ConfigError, EngineError};
use fairsim_engine::tunable::{tunable_writes, TunableValue};
use fairsim_topology::parse_cpulist;

/// The most CPUs a `cpuset.cpus` list is checked against before the machine is known
/// (its syntax only; the machine's range is checked by [`Cgroups::cpusets`]).
const CPULIST_SYNTAX_CPUS: usize = 8192;

/// Declares in `c` the group at `path` with the writes `keys` (`cpu.weight=200`), from
/// `origin`; `field` names the declaration in errors (`--cgroup '/a:...'`). The path is
/// checked before the writes ([`check_declared_path`]), so a declaration bad in both is
/// refused for its path, as before the writes were parsed here.
pub fn declare<'a>(
    c: &mut Cgroups,
    field: &str,
    path: &str,
    keys: impl IntoIterator<Item = &'a str>,
    origin: Origin,
) -> Result<(), EngineError> {
    check_declared_path(field, path)?;
    let keys = parse_keys(keys).map_err(|key| ConfigError::CgroupKey {
        field: field.to_string(),
        key,
    })?;
    c.declare(field, path, keys, origin)
}

/// Declares in `c` the group of one `--cgroup` option: `/PATH` or `/PATH:KEY=V,...`.
/// An item without `=` after `cpuset.cpus=` continues its list (`cpuset.cpus=0-3,8-11`).
pub fn declare_option(c: &mut Cgroups, text: &str) -> Result<(), EngineError> {
    let field = format!("--cgroup '{text}'");
    let (path, keys) = text.split_once(':').unwrap_or((text, ""));
    let mut items: Vec<String> = Vec::new();
    for k in keys.split(',').map(str::trim).filter(|k| !k.is_empty()) {
        match items.last_mut() {
            Some(last) if !k.contains('=') && last.starts_with("cpuset.cpus=") => {
                last.push(',');
                last.push_str(k);
            }
            _ => items.push(k.to_string()),
        }
    }
    declare(
        c,
        &field,
        path.trim(),
        items.iter().map(String::as_str),
        Origin::Option,
    )
}

/// The groups of a run: a scenario's `[cgroup."/PATH"]` tables (in path order, so
/// parents first), then the `--cgroup` options in the order given. A TOML table has no
/// order, so a table's writes are made in its keys' order (`cpu.max` before
/// `cpu.max.burst`, the order a setup script writes them); an option's in the order
/// given.
pub fn from_sources(
    tables: &BTreeMap<String, BTreeMap<String, TunableValue>>,
    options: &[String],
) -> Result<Cgroups, EngineError> {
    let mut c = Cgroups::default();
    for (path, table) in tables {
        let writes = tunable_writes(table);
        declare(
            &mut c,
            &format!("scenario table [cgroup.\"{path}\"]"),
            path,
            writes.iter().map(String::as_str),
            Origin::Scenario,
        )?;
    }
    for o in options {
        declare_option(&mut c, o)?;
    }
    Ok(c)
}

/// Parses a declaration's writes: at most one of `cpu.weight` and `cpu.weight.nice`,
/// each in the kernel's range (its `ERANGE` message), `cpu.idle` (0 or 1), `cpu.max`
/// (`QUOTA_US|max [PERIOD_US]`, as `cpu_period_quota_parse` reads it) and
/// `cpu.max.burst` (us), the last two kept in the order written (each write is a
/// `tg_set_cfs_bandwidth()` of its own), `cpuset.cpus` (a cpulist, its syntax checked here) and
/// `cpuset.cpus.partition` (`root` or `member`), each once; every other key refused by
/// name.
fn parse_keys<'a>(keys: impl IntoIterator<Item = &'a str>) -> Result<Declared, KeyError> {
    let mut weight: Option<(&str, CpuWeight)> = None;
    let mut writes = Writes::default();
    let mut cpuset = CpusetWrites::default();
    let mut cpu_keys = 0usize;
    let mut cpuset_keys = 0usize;
    let mut seen: Vec<&str> = Vec::new();
    for item in keys {
        let (key, value) = match item.split_once('=') {
            Some((k, v)) => (k.trim(), v.trim()),
            None => (item.trim(), ""),
        };
        if key.starts_with("cpu.") {
            cpu_keys += 1;
        }
        let w =
            match key {
                "cpu.weight" => {
                    let w = value.parse::<u64>().map_err(|_| KeyError::Invalid {
                        key: "cpu.weight",
                        got: value.to_string(),
                        allowed: "an integer from 1 to 10000",
                    })?;
                    CpuWeight::Weight(w)
                }
                "cpu.weight.nice" => {
                    let n = value.parse::<i64>().map_err(|_| KeyError::Invalid {
                        key: "cpu.weight.nice",
                        got: value.to_string(),
                        allowed: "an integer from -20 to 19",
                    })?;
                    CpuWeight::Nice(n)
                }
                "cpu.idle" | "cpu.max" | "cpu.max.burst" => {
                    if seen.contains(&key) {
                        return Err(KeyError::GivenTwice {
                            key: key.to_string(),
                        });
                    }
                    seen.push(key);
                    match key {
                        "cpu.idle" => {
                            writes.idle = Some(match value {
                                "0" => false,
                                "1" => true,
                                _ => {
                                    return Err(KeyError::Refused {
                                        key: "cpu.idle",
                                        got: value.to_string(),
                                        errno: "EINVAL",
                                        allowed: "0 or 1",
                                    })
                                }
                            })
                        }
                        "cpu.max" => {
                            let (quota_us, period_us) = parse_cpu_max(value)?;
                            writes.bandwidth.push(BandwidthWrite::Max {
                                quota_us,
                                period_us,
                            });
                        }
                        _ => writes.bandwidth.push(BandwidthWrite::Burst(
                            value.parse::<u64>().map_err(|_| KeyError::Invalid {
                                key: "cpu.max.burst",
                                got: value.to_string(),
                                allowed: "microseconds, an integer up to the cpu.max quota",
                            })?,
                        )),
                    }
                    continue;
                }
                "cpu.uclamp.min" | "cpu.uclamp.max" => {
                    return Err(KeyError::Uclamp {
                        key: key.to_string(),
                    })
                }
                "cpuset.cpus" | "cpuset.cpus.partition" => {
                    if seen.contains(&key) {
                        return Err(KeyError::GivenTwice {
                            key: key.to_string(),
                        });
                    }
                    seen.push(key);
                    cpuset_keys += 1;
                    if key == "cpuset.cpus" {
                        parse_cpulist(CPULIST_SYNTAX_CPUS, value).map_err(|why| {
                            KeyError::CpuList {
                                got: value.to_string(),
                                why,
                            }
                        })?;
                        cpuset.cpus = Some(value.to_string());
                    } else {
                        cpuset.partition = Some(match value {
                            "root" => Partition::Root,
                            "member" => Partition::Member,
                            "isolated" => return Err(KeyError::Isolated),
                            _ => {
                                return Err(KeyError::Invalid {
                                    key: "cpuset.cpus.partition",
                                    got: value.to_string(),
                                    allowed: "root or member",
                                })
                            }
                        });
                    }
                    continue;
                }
                k if k.starts_with("cpuset.") => {
                    return Err(KeyError::CpusetFile { key: k.to_string() })
                }
                k => return Err(KeyError::UnknownFile { key: k.to_string() }),
            };
        w.shares().map_err(KeyError::Weight)?;
        if let Some((first, _)) = weight {
            return Err(KeyError::WeightTwice {
                key: key.to_string(),
                first: first.to_string(),
            });
        }
        weight = Some((key, w));
    }
    Ok(Declared {
        weight: weight.map(|(_, w)| w),
        writes,
        cpuset,
        cpu: cpu_keys > 0 || cpuset_keys == 0,
    })
}

/// `cpu_period_quota_parse`: `max` or a quota in us, then optionally a period in us; the
/// ranges are `tg_set_cfs_bandwidth`'s, checked when the write is made.
fn parse_cpu_max(value: &str) -> Result<(Option<u64>, Option<u64>), KeyError> {
    let bad = || {
        KeyError::Refused {
        key: "cpu.max",
        got: value.to_string(),
        errno: "EINVAL",
        allowed: "'QUOTA_US [PERIOD_US]' or 'max [PERIOD_US]', quota and period at least 1000 us, period at most 1000000 us",
    }
    };
    let mut it = value.split_whitespace();
    let quota = match it.next().ok_or_else(bad)? {
        "max" => None,
        q => Some(q.parse::<u64>().map_err(|_| bad())?),
    };
    let period = match it.next() {
        Some(p) => Some(p.parse::<u64>().map_err(|_| bad())?),
        None => None,
    };
    if it.next().is_some() {
        return Err(bad());
    }
    Ok((quota, period))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fairsim_balance::group::GroupId;
    use fairsim_balance::Kernel;
    use fairsim_engine::cgroup::{check_path, Join, MAX_CGROUPS};
    use fairsim_topology::CpuMask;

    fn declared(options: &[&str]) -> Result<Cgroups, String> {
        let options: Vec<String> = options.iter().map(|s| s.to_string()).collect();
        from_sources(&BTreeMap::new(), &options).map_err(|e| e.to_string())
    }

    #[test]
    fn paths_are_checked() {
        for ok in [
            "/",
            "/a",
            "/a/b",
            "/user.slice/user@1000.service",
            "/x-1_2+3",
        ] {
            assert_eq!(check_path(ok), Ok(()), "{ok}");
        }
        for (bad, why) in [
            ("", "not absolute"),
            ("a", "not absolute"),
            ("/a/", "an empty component"),
            ("//a", "an empty component"),
            ("/a/../b", "'..'"),
            ("/.", "'.'"),
            ("/a b", "' '"),
            ("/a,b", "','"),
            ("/a:b", "':'"),
        ] {
            let e = check_path(bad).unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
        assert!(check_path(&format!("/{}", "a".repeat(256))).is_err());
        assert!(check_path(&format!("/{}", "a".repeat(255))).is_ok());
    }

    #[test]
    fn declarations_make_parents_first_and_keep_order() {
        let c = declared(&["/b/c:cpu.weight=200", "/a", "/b:cpu.weight.nice=-5"]).unwrap();
        let got: Vec<(GroupId, String, GroupId, Option<CpuWeight>, Origin)> = c
            .iter()
            .map(|(id, g)| (id, g.path, g.parent, g.weight, g.origin))
            .collect();
        assert_eq!(
            got,
            [
                (1, "/b".into(), 0, Some(CpuWeight::Nice(-5)), Origin::Option),
                (
                    2,
                    "/b/c".into(),
                    1,
                    Some(CpuWeight::Weight(200)),
                    Origin::Option
                ),
                (3, "/a".into(), 0, None, Origin::Option),
            ]
        );
        assert_eq!(c.id("/"), Some(0));
        assert_eq!(c.id("/b/c"), Some(2));
        assert_eq!(c.id("/z"), None);
    }

    #[test]
    fn bad_declarations_name_the_field_and_what_is_allowed() {
        for (spec, needles) in [
            (
                "a:cpu.weight=1",
                &[
                    "--cgroup 'a:cpu.weight=1'",
                    "not absolute",
                    "allowed: an absolute path",
                ][..],
            ),
            (
                "/:cpu.weight=100",
                &["root cgroup", "EINVAL", "allowed: a child path"],
            ),
            ("/", &["root cgroup", "allowed: a child path"]),
            (
                "/a:cpu.weight=0",
                &[
                    "cpu.weight: 0 is out of range (ERANGE)",
                    "allowed: 1 to 10000",
                ],
            ),
            ("/a:cpu.weight=10001", &["ERANGE", "allowed: 1 to 10000"]),
            (
                "/a:cpu.weight=x",
                &[
                    "cpu.weight: invalid value 'x'",
                    "allowed: an integer from 1 to 10000",
                ],
            ),
            ("/a:cpu.weight", &["cpu.weight: invalid value ''"]),
            (
                "/a:cpu.weight.nice=20",
                &["cpu.weight.nice: 20 is out of range", "allowed: -20 to 19"],
            ),
            (
                "/a:cpu.max=50000 x",
                &[
                    "cpu.max: invalid value '50000 x'",
                    "allowed: 'QUOTA_US [PERIOD_US]'",
                ],
            ),
            (
                "/a:cpu.max.burst=-1",
                &["cpu.max.burst: invalid value '-1'"],
            ),
            ("/a:cpu.idle=yes", &["cpu.idle: invalid value 'yes'"]),
            ("/a:cpu.max=1 2 3", &["cpu.max: invalid value '1 2 3'"]),
            (
                "/a:cpuset.cpus=0-x",
                &["cpuset.cpus: invalid value '0-x'", "allowed: a CPU list"],
            ),
            (
                "/a:cpuset.cpus.partition=isolated",
                &[
                    "cpuset.cpus.partition: 'isolated'",
                    "not modelled",
                    "allowed: root or member",
                ],
            ),
            (
                "/a:cpuset.cpus.partition=other",
                &["cpuset.cpus.partition: invalid value 'other'"],
            ),
            (
                "/a:cpuset.mems=0",
                &["cpuset.mems: this cpuset controller file is not modelled"],
            ),
            (
                "/a:cpuset.cpus=1,cpuset.cpus=2",
                &["cpuset.cpus: given twice"],
            ),
            (
                "/a:memory.max=1G",
                &["'memory.max' is not a cpu controller file"],
            ),
            (
                "/a:cpu.weight=5,cpu.weight.nice=3",
                &["given after cpu.weight", "allowed: one of"],
            ),
            ("/a:cpu.weight=5,cpu.weight=6", &["given after cpu.weight"]),
        ] {
            let e = declared(&[spec]).unwrap_err();
            assert!(!e.contains('\n'), "{e}");
            for n in needles {
                assert!(e.contains(n), "{spec}: {n:?} not in {e}");
            }
        }
        let e = declared(&["/a", "/a:cpu.weight=5"]).unwrap_err();
        assert!(e.contains("/a is declared twice"), "{e}");
        // A parent made by `mkdir -p` may still be declared with its own weight.
        let c = declared(&["/a/b", "/a:cpu.weight=5"]).unwrap();
        assert_eq!(
            c.iter().next().unwrap().1.weight,
            Some(CpuWeight::Weight(5))
        );
    }

    #[test]
    fn scenario_tables_come_first_and_options_write_on_top() {
        let mut tables = BTreeMap::new();
        let mut a = BTreeMap::new();
        a.insert("cpu.weight".to_string(), TunableValue::Int(300));
        tables.insert("/a".to_string(), a);
        tables.insert("/b".to_string(), BTreeMap::new());
        let c = from_sources(&tables, &["/a:cpu.weight=50".into(), "/c".into()]).unwrap();
        let got: Vec<(&str, Option<CpuWeight>)> =
            c.all().map(|g| (g.path.as_str(), g.weight)).collect();
        assert_eq!(
            got,
            [
                ("/a", Some(CpuWeight::Weight(50))),
                ("/b", None),
                ("/c", None)
            ]
        );
        let mut bad = BTreeMap::new();
        let mut t = BTreeMap::new();
        t.insert("cpu.max".to_string(), TunableValue::Str("most".into()));
        bad.insert("/x".to_string(), t);
        let e = from_sources(&bad, &[]).unwrap_err().to_string();
        assert!(
            e.starts_with("scenario table [cgroup.\"/x\"]: cpu.max:"),
            "{e}"
        );
    }

    #[test]
    fn joins_need_a_declared_group_unless_they_create_it() {
        let c = declared(&["/a"]).unwrap();
        let key = |p: &str| Join {
            path: p.into(),
            field: "--workload: schbench: cgroup".into(),
            creates: false,
        };
        let rtapp = |p: &str| Join {
            path: p.into(),
            field: "rtapp t.json: tasks.t.taskgroup".into(),
            creates: true,
        };
        assert_eq!(c.resolve(&[key("/a"), key("/")], Kernel::V6_12).unwrap(), c);
        let e = c
            .resolve(&[key("/b")], Kernel::V6_12)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(
                "--workload: schbench: cgroup: '/b' is not a declared cgroup; allowed: /, /a"
            ),
            "{e}"
        );
        let all = c.resolve(&[rtapp("/r/s")], Kernel::V6_12).unwrap();
        let got: Vec<(&str, Origin)> = all.all().map(|g| (g.path.as_str(), g.origin)).collect();
        assert_eq!(
            got,
            [
                ("/a", Origin::Option),
                ("/r", Origin::Parent),
                ("/r/s", Origin::Rtapp)
            ]
        );
    }

    #[test]
    fn cfs_kernels_refuse_groups_in_one_line() {
        let c = declared(&["/a:cpu.weight=100"]).unwrap();
        for k in Kernel::ALL.into_iter().filter(|k| k.is_cfs()) {
            let e = c.resolve(&[], k).unwrap_err().to_string();
            assert!(
                e.starts_with("--cgroup: task groups are modelled for --kernel 6.12 only")
                    && e.ends_with("allowed: --kernel 6.12, or no --cgroup"),
                "{e}"
            );
            let join = Join {
                path: "/".into(),
                field: "--workload: sysbench-cpu: cgroup".into(),
                creates: false,
            };
            let e = Cgroups::default()
                .resolve(&[join], k)
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with("--workload: sysbench-cpu: cgroup: task groups"),
                "{e}"
            );
            assert!(Cgroups::default().resolve(&[], k).is_ok());
        }
    }

    #[test]
    fn cpuset_only_groups_make_no_task_group_and_keep_the_ids() {
        let c = declared(&[
            "/p:cpuset.cpus=4-7,cpuset.cpus.partition=root",
            "/a:cpu.weight=200",
            "/s/t:cpuset.cpus=0-1",
            "/s/t/u:cpu.weight=50",
            "/q/r:cpuset.cpus=2",
            "/bare",
        ])
        .unwrap();
        let cpu: Vec<(&str, bool)> = c.all().map(|g| (g.path.as_str(), g.cpu)).collect();
        assert_eq!(
            cpu,
            [
                ("/p", false),
                ("/a", true),
                ("/s", true),
                ("/s/t", true),
                ("/s/t/u", true),
                ("/q", false),
                ("/q/r", false),
                ("/bare", true),
            ]
        );
        let ids: Vec<(GroupId, String, GroupId)> =
            c.iter().map(|(id, g)| (id, g.path, g.parent)).collect();
        assert_eq!(
            ids,
            [
                (1, "/a".into(), 0),
                (2, "/s".into(), 0),
                (3, "/s/t".into(), 2),
                (4, "/s/t/u".into(), 3),
                (5, "/bare".into(), 0),
            ]
        );
        assert_eq!(c.len(), 5);
        assert_eq!(c.id("/p"), Some(0));
        assert_eq!(c.id("/q/r"), Some(0));
        assert_eq!(c.id("/s/t/u"), Some(4));
        // A cpuset-only run has no task group, and its joins pass on a CFS kernel.
        let only = declared(&["/p:cpuset.cpus=4-7,cpuset.cpus.partition=root"]).unwrap();
        assert!(only.is_empty() && only.has_cpusets());
        let join = Join {
            path: "/p".into(),
            field: "--workload: schbench: cgroup".into(),
            creates: false,
        };
        assert!(only.resolve(&[join], Kernel::V6_5).is_ok());
        // A later cpu write gives the group the cpu controller.
        let both = declared(&["/p:cpuset.cpus=1", "/p/c:cpu.weight=10"]).unwrap();
        assert_eq!(both.len(), 2);
        // The comma of a CPU list continues cpuset.cpus in --cgroup.
        let lists = declared(&["/x:cpuset.cpus=0-1,4,cpu.weight=5"]).unwrap();
        let g = lists.all().next().unwrap();
        assert_eq!(g.cpuset.cpus.as_deref(), Some("0-1,4"));
        assert_eq!(g.weight, Some(CpuWeight::Weight(5)));
    }

    #[test]
    fn cpusets_give_partitions_and_effective_cpus() {
        let c = declared(&[
            "/p:cpuset.cpus=4-7,cpuset.cpus.partition=root",
            "/p/c",
            "/p/d:cpuset.cpus=5-6,cpuset.cpus.partition=member",
            "/m:cpuset.cpus=2-5",
            "/free",
        ])
        .unwrap();
        let base = vec![CpuMask::from_cpus(8, [0])];
        let plan = c.cpusets(8, &base).unwrap();
        let lists: Vec<String> = plan.partitions.iter().map(CpuMask::to_list).collect();
        assert_eq!(lists, ["0", "4-7"]);
        let eff = |p: &str| plan.effective(p).map(CpuMask::to_list);
        assert_eq!(eff("/p").as_deref(), Some("4-7"));
        assert_eq!(eff("/p/c").as_deref(), Some("4-7"));
        assert_eq!(eff("/p/d").as_deref(), Some("5-6"));
        // A member under the root keeps the CPUs no partition takes.
        assert_eq!(eff("/m").as_deref(), Some("2-3"));
        assert_eq!(eff("/free"), None);
        assert_eq!(eff("/"), None);
    }

    #[test]
    fn bad_cpusets_name_the_field_in_one_line() {
        for (opts, base, needles) in [
            (
                &["/p:cpuset.cpus.partition=root"][..],
                None,
                &["--cgroup: /p: cpuset.cpus.partition=root needs the group's own cpuset.cpus"][..],
            ),
            (
                &["/p:cpuset.cpus=8"],
                None,
                &[
                    "--cgroup: /p: cpuset.cpus: invalid value '8'",
                    "out of range 0-7",
                ],
            ),
            (
                &["/p:cpuset.cpus=0-5:0/3"],
                None,
                &["cpuset.cpus: '0-5:0/3' names no CPU"],
            ),
            (
                &["/a/p:cpuset.cpus=1,cpuset.cpus.partition=root"],
                None,
                &["/a/p: cpuset.cpus.partition=root below another group is not modelled"],
            ),
            (
                &[
                    "/p:cpuset.cpus=0-3,cpuset.cpus.partition=root",
                    "/q:cpuset.cpus=3-4,cpuset.cpus.partition=root",
                ],
                None,
                &["--cgroup cpuset.cpus: 3-4 and 0-3 share CPUs 3"],
            ),
            (
                &["/p:cpuset.cpus=0-3,cpuset.cpus.partition=root"],
                Some(2),
                &["share CPUs 2"],
            ),
            (
                &[
                    "/p:cpuset.cpus=0-3,cpuset.cpus.partition=root",
                    "/p/c:cpuset.cpus=5",
                ],
                None,
                &["/p/c: cpuset.cpus=5 shares no CPU with its parent's effective CPUs (0-3)"],
            ),
        ] {
            let c = declared(opts).unwrap();
            let base: Vec<CpuMask> = base.iter().map(|&b| CpuMask::from_cpus(8, [b])).collect();
            let e = c.cpusets(8, &base).unwrap_err().to_string();
            assert!(!e.contains('\n'), "{e}");
            for n in needles {
                assert!(e.contains(n), "{opts:?}: {n:?} not in {e}");
            }
        }
    }

    #[test]
    fn the_group_count_is_bounded() {
        let many: Vec<String> = (0..=MAX_CGROUPS).map(|i| format!("/g{i}")).collect();
        let e = from_sources(&BTreeMap::new(), &many)
            .unwrap_err()
            .to_string();
        assert!(e.contains("more than 1024 cgroups"), "{e}");
    }
}
