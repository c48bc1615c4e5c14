//! Source address parsing against Terraform's own cases (its `addrs` and
//! `getmodules/moduleaddrs` tests): what each form becomes in the manifest
//! and what `git clone` is given.

use super::*;

/// (clone URL, ref, subdir) of a git source, and its manifest address.
fn git(raw: &str) -> (String, Option<String>, String, String) {
    match parse(raw) {
        Ok(ModuleSource::Git(g)) => {
            let address = ModuleSource::Git(g.clone()).address();
            (g.url, g.git_ref, g.subdir, address)
        }
        other => panic!("{raw}: not a git source: {other:?}"),
    }
}

fn t(
    url: &str,
    git_ref: Option<&str>,
    subdir: &str,
    address: &str,
) -> (String, Option<String>, String, String) {
    (
        url.to_string(),
        git_ref.map(str::to_string),
        subdir.to_string(),
        address.to_string(),
    )
}

#[test]
fn forced_git_urls_keep_their_form_and_split_ref_and_subdir() {
    assert_eq!(
        git("git::https://example.com/repo.git//modules/vpc?ref=v1.2.0"),
        t(
            "https://example.com/repo.git",
            Some("v1.2.0"),
            "modules/vpc",
            "git::https://example.com/repo.git//modules/vpc?ref=v1.2.0"
        )
    );
    assert_eq!(
        git("git::ssh://git@git.example.com:2222/hashicorp/foo.git"),
        t(
            "ssh://git@git.example.com:2222/hashicorp/foo.git",
            None,
            "",
            "git::ssh://git@git.example.com:2222/hashicorp/foo.git"
        )
    );
    assert_eq!(
        git("git::file:///tmp/x/repo.git//sub/?ref=v1"),
        t(
            "file:///tmp/x/repo.git",
            Some("v1"),
            "sub",
            "git::file:///tmp/x/repo.git//sub?ref=v1"
        )
    );
}

#[test]
fn github_shorthands_become_https_git() {
    assert_eq!(
        git("github.com/org/repo//subdir?ref=x"),
        t(
            "https://github.com/org/repo.git",
            Some("x"),
            "subdir",
            "git::https://github.com/org/repo.git//subdir?ref=x"
        )
    );
    assert_eq!(
        parse("github.com/hashicorp/foo").unwrap().address(),
        "git::https://github.com/hashicorp/foo.git"
    );
    assert_eq!(
        parse("github.com/hashicorp/foo.git?foo=bar/baz")
            .unwrap()
            .address(),
        "git::https://github.com/hashicorp/foo.git?foo=bar/baz"
    );
    // Path parts after the repository are a subdirectory, before any `//` one.
    assert_eq!(
        git("github.com/hashicorp/foo/bar//baz?ref=v2"),
        t(
            "https://github.com/hashicorp/foo.git",
            Some("v2"),
            "bar/baz",
            "git::https://github.com/hashicorp/foo.git//bar/baz?ref=v2"
        )
    );
    // Four parts with github.com as host are not a registry address.
    assert_eq!(
        parse("github.com/a/b/c").unwrap().address(),
        "git::https://github.com/a/b.git//c"
    );
    assert_eq!(
        parse("bitbucket.org/hashicorp/tf-test-git")
            .unwrap()
            .address(),
        "git::https://bitbucket.org/hashicorp/tf-test-git.git"
    );
}

#[test]
fn scp_like_ssh_addresses_become_ssh_urls() {
    assert_eq!(
        git("git@github.com:org/repo.git"),
        t(
            "ssh://git@github.com/org/repo.git",
            None,
            "",
            "git::ssh://git@github.com/org/repo.git"
        )
    );
    assert_eq!(
        git("git@github.xyz.com:org/project.git//module/a?ref=test-branch"),
        t(
            "ssh://git@github.xyz.com/org/project.git",
            Some("test-branch"),
            "module/a",
            "git::ssh://git@github.xyz.com/org/project.git//module/a?ref=test-branch"
        )
    );
    // Forcing git on the shorthand gives the same address.
    assert_eq!(
        parse("git::git@github.com:hashicorp/foo.git")
            .unwrap()
            .address(),
        "git::ssh://git@github.com/hashicorp/foo.git"
    );
    // go-getter re-encodes the query of an scp-like address.
    assert_eq!(
        parse("git@github.com:o/r.git?z=1&a=b/c").unwrap().address(),
        "git::ssh://git@github.com/o/r.git?a=b%2Fc&z=1"
    );
}

#[test]
fn go_getter_arguments_are_taken_out_of_the_clone_url() {
    let Ok(ModuleSource::Git(g)) =
        parse("git::https://example.com/r.git?ref=feature%2Fx&depth=3&foo=bar&sshkey=abc")
    else {
        panic!("not git")
    };
    assert_eq!(g.url, "https://example.com/r.git?foo=bar");
    assert_eq!(g.git_ref.as_deref(), Some("feature/x"));
    assert_eq!(g.depth, Some(3));
    assert!(g.ssh_key);
    assert!(parse("git::https://example.com/r.git?depth=x").is_err());
}

#[test]
fn registry_addresses_get_the_default_host() {
    let reg = |raw: &str| match parse(raw) {
        Ok(ModuleSource::Registry(r)) => ModuleSource::Registry(r).address(),
        other => panic!("{raw}: {other:?}"),
    };
    assert_eq!(
        reg("hashicorp/consul/aws"),
        "registry.terraform.io/hashicorp/consul/aws"
    );
    assert_eq!(
        reg("App.Terraform.io/Org/vpc/aws//modules/x/"),
        "app.terraform.io/Org/vpc/aws//modules/x"
    );
    assert_eq!(
        reg("terraform-aws-modules/vpc/aws"),
        "registry.terraform.io/terraform-aws-modules/vpc/aws"
    );
    // Not valid registry parts: go-getter gets them, and cannot resolve them.
    assert!(parse("-bad/consul/aws").is_err());
    assert!(parse("hashicorp/consul/AWS").is_err());
    assert!(matches!(
        parse("localhost/ns/name/aws"),
        Err(InvalidSource::NotFound(_))
    ));
}

#[test]
fn local_paths_are_cleaned_keeping_their_prefix() {
    let local = |raw: &str| match parse(raw) {
        Ok(ModuleSource::Local(p)) => p,
        other => panic!("{raw}: {other:?}"),
    };
    assert_eq!(local("./modules/net/"), "./modules/net");
    assert_eq!(local("./a/../b"), "./b");
    assert_eq!(local("../shared//x"), "../shared/x");
    assert_eq!(local("./"), "./.");
    assert_eq!(local(".\\win\\mod"), "./win/mod");
    assert_eq!(local("./../up"), "../up");
}

#[test]
fn other_getters_are_recognized_but_not_git() {
    let other = |raw: &str| match parse(raw) {
        Ok(ModuleSource::Other(o)) => (o.kind.clone(), ModuleSource::Other(o).address()),
        other => panic!("{raw}: {other:?}"),
    };
    assert_eq!(
        other("s3::https://s3-eu-west-1.amazonaws.com/bucket/vpc.zip"),
        (
            "s3".into(),
            "s3::https://s3-eu-west-1.amazonaws.com/bucket/vpc.zip".into()
        )
    );
    assert_eq!(
        other("https://example.com/vpc-module.zip//vpc"),
        (
            "https".into(),
            "https://example.com/vpc-module.zip//vpc".into()
        )
    );
    assert_eq!(
        other("hg::http://example.com/repo?ref=x").0,
        "hg".to_string()
    );
    assert_eq!(
        other("bucket.s3.eu-west-1.amazonaws.com/vpc.zip"),
        (
            "s3".into(),
            "s3::https://s3.eu-west-1.amazonaws.com/bucket/vpc.zip".into()
        )
    );
    assert_eq!(
        other("www.googleapis.com/storage/v1/bucket/vpc.zip").1,
        "gcs::https://www.googleapis.com/storage/v1/bucket/vpc.zip"
    );
    assert_eq!(
        other("/opt/modules/vpc"),
        ("file".into(), "file:///opt/modules/vpc".into())
    );
}

#[test]
fn unresolvable_and_escaping_addresses_are_invalid() {
    let err = parse("modules/net").unwrap_err();
    assert!(matches!(err, InvalidSource::NotFound(_)));
    assert!(
        err.message().contains("use \"./modules/net\" instead"),
        "{err}"
    );
    let err = parse("git::https://example.com/r.git//../up").unwrap_err();
    assert_eq!(
        err,
        InvalidSource::Invalid(
            "subdirectory path \"../up\" leads outside of the module package".into()
        )
    );
    assert!(parse("github.com/only").is_err());
}

#[test]
fn subdir_split_ignores_scheme_and_query_slashes() {
    assert_eq!(
        split_package_subdir("git::https://h/r.git//a/b?ref=x//y"),
        ("git::https://h/r.git?ref=x//y".into(), "a/b".into())
    );
    assert_eq!(
        split_package_subdir("https://h/r.zip?archive=zip"),
        ("https://h/r.zip?archive=zip".into(), String::new())
    );
    assert_eq!(
        split_package_subdir("hashicorp/consul/aws//modules/x"),
        ("hashicorp/consul/aws".into(), "modules/x".into())
    );
}
