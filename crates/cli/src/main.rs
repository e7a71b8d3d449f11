//! `fairsim`: the command-line front end; everything but this entry point is the
//! `fairsim_cli` library (`lib.rs`), which the Python package calls too.

fn main() -> std::process::ExitCode {
    fairsim_cli::main()
}
