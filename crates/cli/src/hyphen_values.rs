//! Option values that start with `-`. `lib.rs` applies this to the whole command line
//! and `run::run_args_command` to run's options, which `sweep` parses; it is a module of
//! its own rather than part of `lib.rs` so that `cmd::run` need not import the crate
//! root, which imports `cmd::run`.

/// Lets every option value start with `-`, in every subcommand, so that `--seed -1` or
/// `--duration -5ms` reaches the option's own check and is refused with its name and
/// what is allowed, rather than read as an unknown flag.
pub(crate) fn hyphen_values(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|a| {
        if a.get_action().takes_values() && !a.is_positional() {
            a.allow_hyphen_values(true)
        } else {
            a
        }
    })
    .mut_subcommands(hyphen_values)
}
