//! The binary as users install it: `fairsim --version` names the kernel it emulates.

use std::process::Command;

#[test]
fn version_names_the_kernel_it_emulates() {
    let out = Command::new(env!("CARGO_BIN_EXE_fairsim"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text.trim(),
        format!(
            "fairsim {} (emulates the fair class of Linux {})",
            env!("CARGO_PKG_VERSION"),
            fairsim_balance::KERNEL_VERSION
        )
    );
}
