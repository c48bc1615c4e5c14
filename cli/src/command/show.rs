//! `show`: a saved plan or the state, for people or as Terraform's JSON.

use crate::args::ShowArgs;
use crate::client::Client;
use crate::present::object_text::state_text;
use crate::present::plan_json::{plan_json, state_json};
use crate::present::plan_text::render_plan;
use crate::present::report::report;
use fleetform_shared::json::Json;

/// `show [-json] FILE`.
pub fn plan_file(args: &ShowArgs) -> anyhow::Result<u8> {
    let path = args.file.as_deref().expect("called with a plan file");
    let saved = match crate::plan_file::read(path) {
        Ok(s) => s,
        Err(d) => return Ok(report(false, &d)),
    };
    if args.json {
        let mut doc = plan_json(&saved.plan);
        // The configuration the plan was made from, as policy tools read it.
        let (config, _) = fleetform_lang::config::load_config(&saved.files);
        if let (Some(config), Json::Object(m)) = (config, &mut doc) {
            m.insert(
                "configuration".into(),
                crate::present::config_json::configuration_json(&config, &saved.files, &saved.plan),
            );
        }
        println!("{doc}");
    } else {
        // As the plan command, Terraform starts it with a blank line.
        print!("\n{}", render_plan(&saved.plan));
    }
    Ok(0)
}

/// `show [-json]` without a file: every object in the state, then outputs.
pub async fn state(client: &mut Client, ws: &str, json: bool) -> anyhow::Result<u8> {
    let (state, shapes) = crate::client::state_and_shapes(client, ws).await?;
    let state = state.unwrap_or_default();
    if json {
        println!("{}", state_json(&state));
        return Ok(0);
    }
    if state.resources.is_empty() && state.outputs.is_empty() {
        println!("No state.");
        return Ok(0);
    }
    print!("{}", state_text(&state, &shapes));
    Ok(0)
}
