//! `fleetform login` and `logout`: store and remove a coordinator's token
//! in Terraform's credentials file ([`crate::credentials`]).
//!
//! Terraform's `login` runs an OAuth flow against a host's service
//! discovery document; a coordinator has none, and its tokens are issued
//! by whoever runs it (`--auth-token-file`). So `fleetform login` asks for
//! the token, checks it against the coordinator, and stores it only when
//! the coordinator accepts it: a mistyped token is never saved to fail
//! every later command. A coordinator that asks for no token gets none.

use crate::credentials;
use anyhow::Context;
use fleetform_proto::fleetform as pb;
use std::io::{BufRead, IsTerminal, Write};

/// `fleetform login [HOST]`: HOST is a host (`coord.example.com:7400`,
/// reached over https) or a coordinator URL (`http://127.0.0.1:7400` for a
/// loopback one); without it, the coordinator of `--coordinator`.
pub async fn login(
    given: Option<&str>,
    coordinator: Option<&str>,
    input: bool,
) -> anyhow::Result<u8> {
    let (host, url) = target(given, coordinator)?;
    let path = credentials::file()?;
    if !input {
        anyhow::bail!(
            "login asks for the token at a prompt, and -input=false (or TF_INPUT=0) forbids asking; set FLEETFORM_TOKEN for the command instead"
        );
    }
    println!(
        "fleetform will store the token for {host} in plain text in the following file,\nfor later commands to use (the file terraform login uses, so terraform\nlogout {host} removes it too):\n    {}\n",
        path.display()
    );
    // A coordinator that serves without authentication would accept any
    // token: storing one would only suggest a protection there is not.
    match check(&url, None).await? {
        Checked::Accepted => anyhow::bail!(
            "the coordinator at {url} answers without a token (it runs without --auth-token-file), so there is no token to store"
        ),
        Checked::Refused(_) => {}
    }
    let token = read_token(&host)?;
    if token.is_empty() {
        anyhow::bail!("no token given: nothing stored");
    }
    match check(&url, Some(&token)).await? {
        Checked::Accepted => {}
        Checked::Refused(why) => {
            anyhow::bail!("the coordinator at {url} refused this token ({why}): nothing stored")
        }
    }
    credentials::update(&path, &host, Some(&token))?;
    println!(
        "\nSuccess! fleetform has stored the token for {host}: the coordinator at {url} accepted it."
    );
    Ok(0)
}

/// `fleetform logout [HOST]`, worded as Terraform's.
pub fn logout(given: Option<&str>, coordinator: Option<&str>) -> anyhow::Result<u8> {
    let (host, _) = target(given, coordinator)?;
    let path = credentials::file()?;
    if credentials::stored(&path, &host)?.is_none() {
        println!("No credentials for {host} are stored.\n");
        return Ok(0);
    }
    println!(
        "Removing the stored credentials for {host} from the following file:\n    {}\n",
        path.display()
    );
    credentials::update(&path, &host, None)?;
    println!("Success! fleetform has removed the stored API token for {host}.\n");
    if let Some(var) = credentials::env_var_name(&host).filter(|v| std::env::var_os(v).is_some()) {
        println!(
            "{var} is still set in this environment: commands use its token until it is unset."
        );
    }
    Ok(0)
}

/// The host key and the URL to reach it.
fn target(given: Option<&str>, coordinator: Option<&str>) -> anyhow::Result<(String, String)> {
    let given = match (given, coordinator) {
        (Some(g), _) => g,
        (None, Some(c)) => c,
        (None, None) => anyhow::bail!(
            "login needs the coordinator to log in to: fleetform login coord.example.com:7400 (or its URL, or -coordinator=URL); there is no default host"
        ),
    };
    let host = credentials::host_key(given)?;
    let url = if given.contains("://") {
        given.trim_end_matches('/').to_string()
    } else {
        match coordinator {
            // The host of the coordinator given: its URL, scheme and all.
            Some(c) if credentials::host_key(c).is_ok_and(|h| h == host) => {
                c.trim_end_matches('/').to_string()
            }
            // A token crosses the network only encrypted: a plain-text
            // coordinator (on loopback) is named by its http:// URL.
            _ => format!("https://{given}"),
        }
    };
    Ok((host, url))
}

enum Checked {
    Accepted,
    Refused(String),
}

/// Asks the coordinator for something any valid token may read (its
/// workspace list, filtered to the token's grants).
async fn check(url: &str, token: Option<&str>) -> anyhow::Result<Checked> {
    let mut client = crate::client::connect_as(url, token).await?;
    match client
        .list_workspaces(pb::ListWorkspacesRequest::default())
        .await
    {
        Ok(_) => Ok(Checked::Accepted),
        Err(s) if s.code() == tonic::Code::Unauthenticated => {
            Ok(Checked::Refused(s.message().to_string()))
        }
        Err(s) => Err(anyhow::anyhow!(
            "the coordinator at {url} could not check the token: {}",
            s.message()
        )),
    }
}

/// Reads one line, not echoed when standard input is a terminal.
fn read_token(host: &str) -> anyhow::Result<String> {
    print!("Token for {host}:\n  Enter a value: ");
    std::io::stdout().flush()?;
    let stdin = std::io::stdin();
    let mut line = String::new();
    if stdin.is_terminal() {
        use nix::sys::termios::{LocalFlags, SetArg, tcgetattr, tcsetattr};
        let saved = tcgetattr(&stdin).context("reading the terminal's settings")?;
        let mut quiet = saved.clone();
        quiet.local_flags.remove(LocalFlags::ECHO);
        tcsetattr(&stdin, SetArg::TCSANOW, &quiet).context("turning echo off")?;
        let read = stdin.lock().read_line(&mut line);
        // Echo back on before anything can fail.
        let restored = tcsetattr(&stdin, SetArg::TCSANOW, &saved);
        println!();
        read.context("reading the token")?;
        restored.context("turning echo back on")?;
    } else {
        stdin
            .lock()
            .read_line(&mut line)
            .context("reading the token")?;
        println!();
    }
    Ok(line.trim().to_string())
}
