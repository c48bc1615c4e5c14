use super::*;

fn parse(src: &str) -> CliConfig {
    parse_cli_config("test.tfrc", src).unwrap_or_else(|e| panic!("{e}"))
}

fn errors(src: &str) -> Vec<CliConfigError> {
    parse_cli_config("test.tfrc", src).unwrap_err().0
}

fn addr(s: &str) -> ProviderAddr {
    s.parse().unwrap()
}

#[test]
fn a_full_provider_installation_block() {
    let config = parse(
        r#"
plugin_cache_dir = "$HOME/.terraform.d/plugin-cache"
disable_checkpoint = true
credentials "app.terraform.io" {
  token = "xxxx"
}
provider_installation {
  # development builds win over everything
  dev_overrides {
    "hashicorp/null" = "/home/dev/null-provider"
    "example.com/acme/thing" = "/opt/thing"
  }
  filesystem_mirror {
    path    = "/usr/share/terraform/providers"
    include = ["registry.terraform.io/hashicorp/*", "fleetform/sim"]
  }
  network_mirror {
    url = "https://mirror.example.com/providers/"
    exclude = ["*/*/*"]
  }
  direct {
    exclude = ["hashicorp/null"]
  }
}
"#,
    );
    assert_eq!(
        config.plugin_cache_dir.as_deref(),
        Some("$HOME/.terraform.d/plugin-cache")
    );
    let pi = config.provider_installation.unwrap();
    assert_eq!(
        pi.dev_overrides,
        BTreeMap::from([
            (
                addr("hashicorp/null"),
                "/home/dev/null-provider".to_string()
            ),
            (addr("example.com/acme/thing"), "/opt/thing".to_string()),
        ])
    );
    let locations: Vec<&Location> = pi.methods.iter().map(|m| &m.location).collect();
    assert_eq!(
        locations,
        [
            &Location::FilesystemMirror("/usr/share/terraform/providers".into()),
            &Location::NetworkMirror("https://mirror.example.com/providers/".into()),
            &Location::Direct,
        ]
    );
    assert_eq!(pi.methods[0].line, 13);
    let mirror = &pi.methods[0];
    assert!(mirror.selects(&addr("hashicorp/random")));
    assert!(mirror.selects(&addr("fleetform/sim")));
    assert!(!mirror.selects(&addr("acme/thing")));
    assert!(!pi.methods[1].selects(&addr("acme/thing")));
    assert!(!pi.methods[2].selects(&addr("hashicorp/null")));
    assert!(pi.methods[2].selects(&addr("hashicorp/random")));
}

#[test]
fn no_provider_installation_block_means_implied_mirrors() {
    let config = parse("plugin_cache_dir = \"/tmp/cache\"\n");
    assert_eq!(config.provider_installation, None);
    assert_eq!(parse("").provider_installation, None);
    let pi = parse("provider_installation {}\n")
        .provider_installation
        .unwrap();
    assert!(pi.methods.is_empty() && pi.dev_overrides.is_empty());
}

#[test]
fn dev_overrides_keep_lines_and_ignore_lookalikes() {
    let src = "# dev_overrides { in a comment\nprovider_installation {\n  dev_overrides{\n    \"null\" = \"/a\"\n  }\n  filesystem_mirror {\n    path = \"dev_overrides {\"\n  }\n}\n";
    let pi = parse(src).provider_installation.unwrap();
    assert_eq!(pi.dev_overrides[&addr("hashicorp/null")], "/a");
    assert_eq!(
        pi.methods[0].location,
        Location::FilesystemMirror("dev_overrides {".into())
    );
    assert_eq!(pi.methods[0].line, 6);
}

#[test]
fn errors_name_the_file_and_line() {
    let errs =
        errors("provider_installation {\n  filesystem_mirror {\n    include = [\"a/b\"]\n  }\n}\n");
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!((errs[0].file.as_str(), errs[0].line), ("test.tfrc", 2));
    assert!(
        errs[0].message.contains("requires a non-empty \"path\""),
        "{errs:?}"
    );
    assert!(errs[0].to_string().starts_with("test.tfrc:2: "));

    let errs = errors("provider_installation {\n  direct {\n    exclude = [\"*/null\"]\n  }\n}\n");
    assert_eq!(errs[0].line, 3);
    assert!(
        errs[0].message.contains("namespace can be a wildcard only"),
        "{errs:?}"
    );

    let errs = errors("provider_installation {\n  carrier_pigeon {}\n}\n");
    assert!(
        errs[0]
            .message
            .contains("unknown provider installation method \"carrier_pigeon\"")
    );

    let errs = errors(
        "provider_installation {\n  direct {}\n  dev_overrides {\n    \"null\" = \"/x\"\n  }\n}\n",
    );
    assert_eq!(errs[0].line, 3);
    assert!(
        errs[0].message.contains("must appear before all other"),
        "{errs:?}"
    );

    let errs = errors("provider_installation {}\nprovider_installation {}\n");
    assert_eq!(errs[0].line, 2);
    assert!(errs[0].message.contains("no more than one"));

    let errs = errors(
        "provider_installation {\n  dev_overrides {\n    \"not a/valid/addr/x\" = \"/x\"\n  }\n}\n",
    );
    assert!(
        errs[0]
            .message
            .contains("not a valid provider source string"),
        "{errs:?}"
    );

    // A syntax error says where the parser stopped (after the unclosed
    // block's brace) and what it expected there.
    let errs = errors("provider_installation {\n  direct {\n");
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].message.starts_with("invalid HCL syntax at column "),
        "{errs:?}"
    );
    assert_eq!(errs[0].line, 2, "{errs:?}");
    assert!(errs[0].message.contains("expected `}`"), "{errs:?}");

    // Literals only, as in Terraform's HCL 1 files; an argument once (the
    // second is the error).
    let errs = errors("plugin_cache_dir = var.dir\n");
    assert_eq!(errs[0].line, 1);
    assert!(
        errs[0]
            .message
            .contains("plugin_cache_dir must be a literal value: variables are not allowed"),
        "{errs:?}"
    );
    let errs = errors("plugin_cache_dir = \"/a\"\n\nplugin_cache_dir = \"/b\"\n");
    assert_eq!(errs[0].line, 3);
    assert!(errs[0].message.contains("redefined attribute"), "{errs:?}");
    let errs = errors("provider_installation {\n  direct {\n    exclude = [\"a/b\", 3]\n  }\n}\n");
    assert!(errs[0].message.contains("a number"), "{errs:?}");

    let errs = errors("provider_installation {\n  path = \"/x\"\n}\n");
    assert!(errs[0].message.contains("must all be blocks"), "{errs:?}");
}
