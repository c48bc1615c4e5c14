use super::*;
use std::os::unix::fs::PermissionsExt;

fn touch(path: &Path, executable: bool) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, b"#!/bin/sh\n").unwrap();
    let mode = if executable { 0o755 } else { 0o644 };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// `<mirror>/<addr>/<version>/<platform>/terraform-provider-<type>_v<version>_x5`.
fn unpacked(mirror: &Path, addr: &str, version: &str) -> PathBuf {
    let a: ProviderAddr = addr.parse().unwrap();
    let exe = mirror
        .join(a.to_string())
        .join(version)
        .join(platform())
        .join(format!("terraform-provider-{}_v{version}_x5", a.type_name));
    touch(&exe, true);
    exe
}

fn addr(s: &str) -> ProviderAddr {
    s.parse().unwrap()
}

/// A machine in a temp dir: home, working dir, XDG dirs and the directory
/// of the executable, with nothing from the real environment.
struct Machine {
    root: tempfile::TempDir,
}

impl Machine {
    fn new() -> Machine {
        Machine {
            root: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.path().join(rel)
    }

    fn env(&self) -> Environment {
        Environment {
            home: Some(self.path("home")),
            xdg_data_home: Some(self.path("xdg-home")),
            xdg_data_dirs: Some(
                std::env::join_paths([self.path("xdg-a"), self.path("xdg-b")]).unwrap(),
            ),
            cwd: self.path("work"),
            exe_dir: Some(self.path("exe")),
            ..Environment::default()
        }
    }

    fn config(&self, text: &str) -> Environment {
        let file = self.path("cli.tfrc");
        std::fs::write(&file, text).unwrap();
        Environment {
            tf_cli_config_file: Some(file.into()),
            ..self.env()
        }
    }
}

fn resolve(env: &Environment, a: &str, c: Option<&str>) -> Result<Resolved, ResolveError> {
    Resolver::new(env).resolve(&addr(a), c)
}

#[test]
fn mirrors_offer_the_newest_version_allowed_across_all_of_them() {
    let m = Machine::new();
    let (one, two) = (m.path("mirror1"), m.path("mirror2"));
    unpacked(&one, "hashicorp/null", "3.1.0");
    let newest_allowed = unpacked(&two, "hashicorp/null", "3.2.1");
    unpacked(&one, "hashicorp/null", "4.0.0");
    let env = m.config(&format!(
        "provider_installation {{\n  filesystem_mirror {{\n    path = {:?}\n  }}\n  filesystem_mirror {{\n    path = {:?}\n  }}\n}}\n",
        one, two
    ));
    let r = resolve(&env, "hashicorp/null", Some("~> 3.1")).unwrap();
    assert_eq!(r.executable, newest_allowed);
    assert_eq!(r.version, Some("3.2.1".parse().unwrap()));
    let r = resolve(&env, "hashicorp/null", None).unwrap();
    assert_eq!(r.version, Some("4.0.0".parse().unwrap()));
    let r = resolve(&env, "hashicorp/null", Some("< 3.2")).unwrap();
    assert_eq!(r.version, Some("3.1.0".parse().unwrap()));
}

#[test]
fn other_platforms_and_bad_version_dirs_are_not_candidates() {
    let m = Machine::new();
    let mirror = m.path("mirror");
    let good = unpacked(&mirror, "fleetform/sim", "0.1.0");
    let base = mirror.join("registry.terraform.io/fleetform/sim");
    touch(&base.join("0.3.0/plan9_mips/terraform-provider-sim"), true);
    touch(
        &base
            .join("latest")
            .join(platform())
            .join("terraform-provider-sim"),
        true,
    );
    let env = m.config(&format!(
        "provider_installation {{\n  filesystem_mirror {{\n    path = {mirror:?}\n  }}\n}}\n"
    ));
    assert_eq!(
        resolve(&env, "fleetform/sim", None).unwrap().executable,
        good
    );
}

#[test]
fn include_and_exclude_decide_which_methods_are_searched() {
    let m = Machine::new();
    let (a, b) = (m.path("a"), m.path("b"));
    unpacked(&a, "hashicorp/null", "9.0.0");
    let wanted = unpacked(&b, "hashicorp/null", "1.0.0");
    unpacked(&a, "hashicorp/random", "2.0.0");
    let env = m.config(&format!(
        "provider_installation {{\n  filesystem_mirror {{\n    path = {a:?}\n    exclude = [\"hashicorp/null\"]\n  }}\n  filesystem_mirror {{\n    path = {b:?}\n    include = [\"registry.terraform.io/hashicorp/*\"]\n  }}\n}}\n"
    ));
    assert_eq!(
        resolve(&env, "hashicorp/null", None).unwrap().executable,
        wanted
    );
    assert_eq!(
        resolve(&env, "hashicorp/random", None).unwrap().version,
        Some("2.0.0".parse().unwrap())
    );
    let err = resolve(&env, "example.com/acme/thing", None).unwrap_err();
    let ResolveError::NotFound { searched, .. } = &err else {
        panic!("{err}")
    };
    assert!(
        searched[0].starts_with(&a.display().to_string()),
        "{searched:?}"
    );
    let b_text = b.display().to_string();
    assert!(
        !searched.iter().any(|s| s.starts_with(&b_text)),
        "the second mirror only includes hashicorp/*: {searched:?}"
    );
}

#[test]
fn dev_overrides_win_whatever_the_version_constraint() {
    let m = Machine::new();
    let mirror = m.path("mirror");
    unpacked(&mirror, "hashicorp/null", "3.2.1");
    let dev = m.path("dev/null");
    touch(&dev.join("README"), false);
    touch(&dev.join("terraform-provider-nullish"), true);
    let exe = dev.join("terraform-provider-null");
    touch(&exe, true);
    let env = m.config(&format!(
        "provider_installation {{\n  dev_overrides {{\n    \"hashicorp/null\" = {dev:?}\n    \"hashicorp/random\" = {:?}\n  }}\n  filesystem_mirror {{\n    path = {mirror:?}\n  }}\n}}\n",
        m.path("nowhere")
    ));
    let r = resolve(&env, "hashicorp/null", Some("= 1.0.0")).unwrap();
    assert_eq!((r.executable, r.version), (exe, None));
    let err = resolve(&env, "hashicorp/random", None).unwrap_err();
    assert!(
        err.to_string().contains("development override: could not find an executable file starting with terraform-provider-random"),
        "{err}"
    );
}

#[test]
fn packed_mirror_packages_are_recognized_but_not_supported_yet() {
    let m = Machine::new();
    let mirror = m.path("mirror");
    let base = mirror.join("registry.terraform.io/hashicorp/null");
    touch(
        &base.join(format!("terraform-provider-null_3.3.0_{}.zip", platform())),
        false,
    );
    unpacked(&mirror, "hashicorp/null", "3.2.1");
    let env = m.config(&format!(
        "provider_installation {{\n  filesystem_mirror {{\n    path = {mirror:?}\n  }}\n}}\n"
    ));
    let err = resolve(&env, "hashicorp/null", None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("packed (zip) filesystem mirror package"),
        "{err}"
    );
    assert!(err.contains("does not support yet"), "{err}");
    assert!(
        err.contains(&base.join("3.3.0").join(platform()).display().to_string()),
        "{err}"
    );
    let r = resolve(&env, "hashicorp/null", Some("< 3.3")).unwrap();
    assert_eq!(r.version, Some("3.2.1".parse().unwrap()));
}

#[test]
fn implied_mirrors_are_used_only_without_a_provider_installation_block() {
    for (i, dir) in [
        "work/terraform.d/plugins",
        "home/.terraform.d/plugins",
        "xdg-home/terraform/plugins",
        "xdg-b/terraform/plugins",
    ]
    .into_iter()
    .enumerate()
    {
        let m = Machine::new();
        let exe = unpacked(&m.path(dir), "example.com/acme/thing", &format!("1.{i}.0"));
        assert_eq!(
            resolve(&m.env(), "example.com/acme/thing", None)
                .unwrap()
                .executable,
            exe,
            "{dir}"
        );
        let env = m.config("provider_installation {\n  direct {}\n}\n");
        let err = resolve(&env, "example.com/acme/thing", None).unwrap_err();
        assert!(
            err.to_string()
                .contains("direct installation from the origin registry (line 2): not supported"),
            "{err}"
        );
    }
    let m = Machine::new();
    let home = m.path("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join(".terraformrc"), "plugin_cache_dir = \"/tmp/x\"\n").unwrap();
    let exe = unpacked(
        &m.path("work/terraform.d/plugins"),
        "hashicorp/null",
        "1.0.0",
    );
    assert_eq!(
        resolve(&m.env(), "hashicorp/null", None)
            .unwrap()
            .executable,
        exe
    );
}

#[test]
fn the_cli_configuration_file_is_found_like_terraform_finds_it() {
    let m = Machine::new();
    let (tf, ff, rc) = (m.path("tf"), m.path("ff"), m.path("rc"));
    let tf_exe = unpacked(&tf, "hashicorp/null", "1.0.0");
    let ff_exe = unpacked(&ff, "hashicorp/null", "1.0.0");
    let rc_exe = unpacked(&rc, "hashicorp/null", "1.0.0");
    let write = |name: &str, dir: &Path| {
        let file = m.path(name);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(
            &file,
            format!(
                "provider_installation {{\n  filesystem_mirror {{\n    path = {dir:?}\n  }}\n}}\n"
            ),
        )
        .unwrap();
        file
    };
    let env = Environment {
        tf_cli_config_file: Some(write("tf.tfrc", &tf).into()),
        fleetform_cli_config_file: Some(write("ff.tfrc", &ff).into()),
        ..m.env()
    };
    write("home/.terraformrc", &rc);
    assert_eq!(
        resolve(&env, "hashicorp/null", None).unwrap().executable,
        tf_exe
    );
    let env = Environment {
        tf_cli_config_file: None,
        ..env
    };
    assert_eq!(
        resolve(&env, "hashicorp/null", None).unwrap().executable,
        ff_exe
    );
    assert_eq!(
        resolve(&m.env(), "hashicorp/null", None)
            .unwrap()
            .executable,
        rc_exe
    );

    let named_missing = Environment {
        tf_cli_config_file: Some(m.path("absent.tfrc").into()),
        ..m.env()
    };
    let implied = unpacked(
        &m.path("work/terraform.d/plugins"),
        "hashicorp/null",
        "0.1.0",
    );
    assert_eq!(
        resolve(&named_missing, "hashicorp/null", Some("< 1"))
            .unwrap()
            .executable,
        implied,
        "a named file that does not exist is a warning: no provider_installation block"
    );
    let bad = m.config("provider_installation {\n  filesystem_mirror {}\n}\n");
    let err = resolve(&bad, "hashicorp/null", None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("cli.tfrc:2: method filesystem_mirror requires"),
        "{err}"
    );
}

#[test]
fn bundled_providers_are_used_only_when_nothing_else_has_the_provider() {
    let m = Machine::new();
    let exe_dir = m.path("exe");
    let flat = exe_dir.join("terraform-provider-null");
    touch(&flat, true);
    touch(&exe_dir.join("terraform-provider-aws"), true);
    let sim = unpacked(&exe_dir.join("providers"), "fleetform/sim", "0.1.0");
    assert_eq!(
        resolve(&m.env(), "hashicorp/null", Some("~> 3.2"))
            .unwrap()
            .executable,
        flat
    );
    assert_eq!(
        resolve(&m.env(), "fleetform/sim", None).unwrap().executable,
        sim
    );
    assert!(
        resolve(&m.env(), "hashicorp/aws", None).is_err(),
        "not one of ours"
    );
    assert!(
        resolve(&m.env(), "example.com/other/null", None).is_err(),
        "not one of ours"
    );

    let mirror = m.path("work/terraform.d/plugins");
    unpacked(&mirror, "hashicorp/null", "3.2.1");
    let err = resolve(&m.env(), "hashicorp/null", Some("~> 4.0")).unwrap_err();
    let ResolveError::NotFound {
        available,
        searched,
        constraint,
        ..
    } = &err
    else {
        panic!("{err}")
    };
    assert_eq!(constraint.as_deref(), Some("~> 4.0"));
    assert_eq!(available.len(), 1, "{available:?}");
    assert!(available[0].starts_with("3.2.1 in "), "{available:?}");
    assert!(
        !searched.iter().any(|s| s.contains("bundled")),
        "{searched:?}"
    );
}

#[test]
fn plugin_dirs_take_flat_and_mirror_layouts() {
    let m = Machine::new();
    let dir = m.path("plugins");
    touch(&dir.join("terraform-provider-null_v3.9.0"), true);
    let best = dir.join("terraform-provider-null_v3.10.1_x5");
    touch(&best, true);
    touch(&dir.join("terraform-provider-null_v9.0.0"), false);
    touch(&dir.join("terraform-provider-nullish"), true);
    let env = Environment {
        plugin_dirs: Some(dir.clone().into()),
        ..m.env()
    };
    assert_eq!(
        resolve(&env, "hashicorp/null", None).unwrap().executable,
        best
    );
    assert_eq!(
        resolve_in(&addr("null"), std::slice::from_ref(&dir)).unwrap(),
        best
    );
    let r = resolve(&env, "hashicorp/null", Some("< 3.10")).unwrap();
    assert_eq!(r.version, Some("3.9.0".parse().unwrap()));
}

#[test]
fn a_missing_provider_names_every_searched_path_and_the_constraint() {
    let m = Machine::new();
    let err = resolve(&m.env(), "hashicorp/aws", Some(">= 5.0")).unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("no available version of provider registry.terraform.io/hashicorp/aws matches the constraint \">= 5.0\"; searched: "),
        "{text}"
    );
    for dir in [
        "work/terraform.d/plugins",
        "home/.terraform.d/plugins",
        "xdg-home/terraform/plugins",
        "xdg-a/terraform/plugins",
        "xdg-b/terraform/plugins",
        "exe/providers",
        "exe",
    ] {
        let shown = format!("{} (", m.path(dir).display());
        assert!(text.contains(&shown), "{dir} missing from {text}");
    }
    assert!(text.contains("does not exist"), "{text}");
    let err = resolve(&m.env(), "hashicorp/aws", Some("=> 5.0")).unwrap_err();
    assert!(err.to_string().contains("did you mean \">=\"?"), "{err}");
}

#[test]
fn the_resolver_remembers_what_it_found() {
    let m = Machine::new();
    let exe = unpacked(
        &m.path("work/terraform.d/plugins"),
        "hashicorp/null",
        "1.0.0",
    );
    let resolver = Resolver::new(&m.env());
    assert_eq!(
        resolver.resolve(&addr("null"), None).unwrap().executable,
        exe
    );
    std::fs::remove_file(&exe).unwrap();
    assert_eq!(
        resolver.resolve(&addr("null"), None).unwrap().executable,
        exe
    );
    assert!(
        Resolver::new(&m.env())
            .resolve(&addr("null"), None)
            .is_err()
    );
}

#[test]
fn the_builtin_provider_comes_only_from_next_to_the_executable() {
    let m = Machine::new();
    let builtin = "terraform.io/builtin/terraform";
    let missing = resolve(&m.env(), builtin, None).unwrap_err();
    let text = missing.to_string();
    assert!(
        matches!(missing, ResolveError::BuiltIn { .. })
            && text.starts_with("provider terraform.io/builtin/terraform: the built-in provider is bundled with fleetform as the executable terraform-provider-terraform")
            && text.contains(&m.path("exe").display().to_string()),
        "{text}"
    );

    // Nothing the user installs or overrides replaces it: not a plugin dir,
    // not a mirror (configured or implied), not a development override.
    let plugins = m.path("plugins");
    touch(&plugins.join("terraform-provider-terraform"), true);
    unpacked(&plugins, builtin, "1.0.0");
    unpacked(&m.path("work/terraform.d/plugins"), builtin, "1.0.0");
    unpacked(&m.path("exe/providers"), builtin, "1.0.0");
    let dev = m.path("dev");
    touch(&dev.join("terraform-provider-terraform"), true);
    let env = m.config(&format!(
        "provider_installation {{\n  dev_overrides {{\n    {builtin:?} = {dev:?}\n  }}\n  filesystem_mirror {{\n    path = {plugins:?}\n  }}\n}}\n"
    ));
    let env = Environment {
        plugin_dirs: Some(plugins.clone().into()),
        ..env
    };
    assert!(resolve(&env, builtin, None).is_err());
    assert!(resolve(&m.env(), builtin, None).is_err());

    let bundled = m.path("exe/terraform-provider-terraform");
    touch(&bundled, false);
    assert!(resolve(&m.env(), builtin, None).is_err(), "not executable");
    touch(&bundled, true);
    for env in [m.env(), env] {
        let r = resolve(&env, builtin, None).unwrap();
        assert_eq!((r.executable, r.version), (bundled.clone(), None));
    }
    assert_eq!(
        resolve(&m.env(), "Terraform.io/BUILTIN/terraform", None)
            .unwrap()
            .executable,
        bundled
    );
    assert_eq!(
        resolve_in(&ProviderAddr::implied("terraform"), &[m.path("exe")]).unwrap(),
        bundled
    );
    // `hashicorp/terraform` is an ordinary (and not bundled) provider.
    assert!(resolve(&m.env(), "hashicorp/terraform", None).is_err());
}

#[test]
fn builtin_providers_refuse_versions_and_unknown_types() {
    let m = Machine::new();
    touch(&m.path("exe/terraform-provider-terraform"), true);
    touch(&m.path("exe/terraform-provider-other"), true);
    let err = resolve(&m.env(), "terraform.io/builtin/terraform", Some(">= 1.0"))
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "provider terraform.io/builtin/terraform: built-in providers do not support explicit version constraints"
    );
    assert!(resolve(&m.env(), "terraform.io/builtin/terraform", Some("")).is_ok());
    let err = resolve(&m.env(), "terraform.io/builtin/other", None)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "provider terraform.io/builtin/other: this fleetform release has no built-in provider named \"other\""
    );
}
