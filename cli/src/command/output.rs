//! `output [NAME]`: the root module's outputs from the state, as HCL,
//! `-json` or `-raw`.

use crate::client::{self, Client};
use crate::present::run_text::{hcl_value, json_value};
use fleetform_shared::Value;
use fleetform_shared::json::Json;

pub async fn run(
    client: &mut Client,
    ws: &str,
    name: Option<&str>,
    json: bool,
    raw: bool,
) -> anyhow::Result<u8> {
    let outputs = client::state(client, ws)
        .await?
        .map(|s| s.outputs)
        .unwrap_or_default();
    match name {
        Some(n) => {
            let Some(o) = outputs.get(n) else {
                eprintln!(
                    "Error: Output \"{n}\" not found\n\nThe output variable requested could not be found in the state file."
                );
                return Ok(1);
            };
            if json {
                println!("{}", json_value(&o.value));
            } else if raw {
                match &o.value {
                    // Like terraform output -raw: the bare value, no newline.
                    Value::String(s) => print!("{s}"),
                    Value::Number(n) => print!("{n}"),
                    Value::Bool(b) => print!("{b}"),
                    _ => {
                        eprintln!(
                            "Error: Unsupported value for raw output\n\nThe -raw option only supports strings, numbers, and boolean values."
                        );
                        return Ok(1);
                    }
                }
            } else {
                println!("{}", hcl_value(&o.value, 0));
            }
        }
        None if json => {
            let obj: Json = outputs
                .iter()
                .map(|(k, o)| {
                    // The value's type in cty's JSON form, as Terraform
                    // prints it (a map reads as an object: fleetform's
                    // values do not tell the two apart).
                    let ty = fleetform_shared::cty::infer_type(&o.value);
                    let ty = Json::parse(&fleetform_shared::cty::type_to_json(&ty))
                        .unwrap_or(Json::Null);
                    let fields = [
                        ("sensitive", o.sensitive.into()),
                        ("type", ty),
                        ("value", json_value(&o.value)),
                    ];
                    (k.clone(), Json::object(fields))
                })
                .collect();
            println!("{}", obj.to_string_pretty());
        }
        None => {
            for (k, o) in &outputs {
                let v = if o.sensitive {
                    "<sensitive>".to_string()
                } else {
                    hcl_value(&o.value, 0)
                };
                println!("{k} = {v}");
            }
        }
    }
    Ok(0)
}
