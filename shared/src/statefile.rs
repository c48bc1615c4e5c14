//! Terraform's state file format (version 4), as `terraform state pull`
//! prints it and `terraform.tfstate` holds it.
//!
//! Written from our snapshot: one resource entry per (module instance,
//! mode, type, name), its instances with `index_key`, the deposed objects
//! as extra instances with a `deposed` key, attributes as plain JSON,
//! sensitive paths in Terraform's step notation and private data in base64.
//! Our snapshot records a resource's provider, not the provider
//! configuration it used, so the `provider` field names the root
//! module's default configuration of that provider.

use crate::addr::{AbsResourceInstance, InstanceKey, ModuleInstance, ResourceMode};
use crate::json::{Json, Map};
use crate::state::{ObjectState, ObjectStatus, State};
use crate::value::{Number, PathStep};
use base64::Engine as _;
use std::collections::BTreeMap;

/// The state file document for `state`.
pub fn to_v4(state: &State, terraform_version: &str) -> Json {
    let mut outputs = Map::new();
    for (name, o) in &state.outputs {
        let ty = crate::cty::infer_type(&o.value);
        let ty_json = Json::parse(&crate::cty::type_to_json(&ty)).unwrap_or(Json::Null);
        let mut entry = Map::new();
        entry.insert("value".into(), Json::from(&o.value));
        entry.insert("type".into(), ty_json);
        if o.sensitive {
            entry.insert("sensitive".into(), Json::Bool(true));
        }
        outputs.insert(name.clone(), Json::Object(entry));
    }
    // Resources in address order, each with its instances in key order.
    type Group<'a> = (ModuleInstance, ResourceMode, String, String);
    let mut groups: BTreeMap<Group<'_>, Vec<(&AbsResourceInstance, Json)>> = BTreeMap::new();
    let mut providers: BTreeMap<Group<'_>, String> = BTreeMap::new();
    for (addr, inst) in &state.resources {
        let r = &addr.resource.resource;
        let key: Group<'_> = (
            addr.module.clone(),
            r.mode,
            r.type_name.clone(),
            r.name.clone(),
        );
        providers
            .entry(key.clone())
            .or_insert_with(|| format!("provider[\"{}\"]", inst.provider));
        let list = groups.entry(key).or_default();
        if let Some(obj) = &inst.current {
            list.push((addr, instance(addr, obj, None)));
        }
        for (deposed, obj) in &inst.deposed {
            list.push((addr, instance(addr, obj, Some(deposed))));
        }
    }
    let mut resources = Vec::new();
    for (key, instances) in groups {
        let (module, mode, type_name, name) = &key;
        let mut entry = Map::new();
        if !module.is_root() {
            entry.insert("module".into(), Json::String(module.to_string()));
        }
        let mode = match mode {
            ResourceMode::Managed => "managed",
            ResourceMode::Data => "data",
        };
        entry.insert("mode".into(), Json::String(mode.into()));
        entry.insert("type".into(), Json::String(type_name.clone()));
        entry.insert("name".into(), Json::String(name.clone()));
        let each = instances.first().and_then(|(a, _)| match a.resource.key {
            InstanceKey::None => None,
            InstanceKey::Int(_) => Some("list"),
            InstanceKey::Str(_) => Some("map"),
        });
        if let Some(each) = each {
            entry.insert("each".into(), Json::String(each.into()));
        }
        entry.insert("provider".into(), Json::String(providers[&key].clone()));
        entry.insert(
            "instances".into(),
            Json::Array(instances.into_iter().map(|(_, j)| j).collect()),
        );
        resources.push(Json::Object(entry));
    }
    Json::object([
        ("version", Json::Number(Number::from(4i64))),
        ("terraform_version", Json::String(terraform_version.into())),
        ("serial", Json::Number(Number::from(state.serial))),
        ("lineage", Json::String(state.lineage.clone())),
        ("outputs", Json::Object(outputs)),
        ("resources", Json::Array(resources)),
        ("check_results", Json::Null),
    ])
}

fn instance(addr: &AbsResourceInstance, obj: &ObjectState, deposed: Option<&String>) -> Json {
    let mut m = Map::new();
    match &addr.resource.key {
        InstanceKey::None => {}
        InstanceKey::Int(i) => {
            m.insert("index_key".into(), Json::Number(Number::from(*i)));
        }
        InstanceKey::Str(s) => {
            m.insert("index_key".into(), Json::String(s.clone()));
        }
    }
    if obj.status == ObjectStatus::Tainted {
        m.insert("status".into(), Json::String("tainted".into()));
    }
    if let Some(d) = deposed {
        m.insert("deposed".into(), Json::String(d.clone()));
    }
    m.insert(
        "schema_version".into(),
        Json::Number(Number::from(obj.schema_version)),
    );
    m.insert("attributes".into(), Json::from(&obj.value));
    m.insert(
        "sensitive_attributes".into(),
        Json::Array(obj.sensitive_paths.iter().map(|p| path(p)).collect()),
    );
    if !obj.private.is_empty() {
        m.insert(
            "private".into(),
            Json::String(base64::engine::general_purpose::STANDARD.encode(&obj.private)),
        );
    }
    if !obj.dependencies.is_empty() {
        let mut deps: Vec<String> = obj.dependencies.iter().map(|d| d.to_string()).collect();
        deps.sort();
        m.insert(
            "dependencies".into(),
            Json::Array(deps.into_iter().map(Json::String).collect()),
        );
    }
    if obj.create_before_destroy {
        m.insert("create_before_destroy".into(), Json::Bool(true));
    }
    Json::Object(m)
}

/// A path as Terraform's state writes it: `[{"type":"get_attr","value":"a"},
/// {"type":"index","value":{"value":0,"type":"number"}}]`.
fn path(steps: &[PathStep]) -> Json {
    Json::Array(
        steps
            .iter()
            .map(|s| match s {
                PathStep::Key(k) => Json::object([
                    ("type", Json::String("get_attr".into())),
                    ("value", Json::String(k.clone())),
                ]),
                PathStep::Index(i) => Json::object([
                    ("type", Json::String("index".into())),
                    (
                        "value",
                        Json::object([
                            ("value", Json::Number(Number::from(*i))),
                            ("type", Json::String("number".into())),
                        ]),
                    ),
                ]),
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addr::{AbsResource, ProviderAddr};
    use crate::state::{OutputState, StateDelta};
    use crate::value::Value;

    fn object(id: &str, deps: Vec<AbsResource>) -> ObjectState {
        ObjectState {
            value: Value::object([("id", Value::from(id)), ("n", Value::int(2))]),
            private: b"pv".to_vec(),
            schema_version: 1,
            status: ObjectStatus::Ready,
            dependencies: deps,
            create_before_destroy: false,
            sensitive_paths: vec![],
        }
    }

    #[test]
    fn writes_terraform_state_version_4() {
        let mut s = State::new("lin");
        s.serial = 7;
        let null = ProviderAddr::implied("null");
        let a: AbsResourceInstance = "null_resource.a[1]".parse().unwrap();
        let b: AbsResourceInstance = "module.m[\"x\"].null_resource.b".parse().unwrap();
        let mut tainted = object("a1", vec![]);
        tainted.status = ObjectStatus::Tainted;
        tainted.sensitive_paths = vec![vec![PathStep::Key("tags".into()), PathStep::Index(0)]];
        s.apply_delta(&StateDelta::SetCurrent {
            addr: a.clone(),
            provider: null.clone(),
            object: Some(tainted),
        });
        s.apply_delta(&StateDelta::SetDeposed {
            addr: a,
            provider: null.clone(),
            key: "00000001".into(),
            object: Some(object("old", vec![])),
        });
        let dep: AbsResource = "null_resource.a".parse().unwrap();
        let mut cbd = object("b", vec![dep]);
        cbd.create_before_destroy = true;
        s.apply_delta(&StateDelta::SetCurrent {
            addr: b,
            provider: null,
            object: Some(cbd),
        });
        s.outputs.insert(
            "o".into(),
            OutputState {
                value: Value::List(vec![Value::from("x")]),
                sensitive: true,
            },
        );
        let got = to_v4(&s, "1.9.0").to_string();
        let want = concat!(
            r#"{"check_results":null,"lineage":"lin","#,
            r#""outputs":{"o":{"sensitive":true,"type":["tuple",["string"]],"value":["x"]}},"#,
            r#""resources":["#,
            r#"{"each":"list","instances":["#,
            r#"{"attributes":{"id":"a1","n":2},"index_key":1,"private":"cHY=","schema_version":1,"#,
            r#""sensitive_attributes":[[{"type":"get_attr","value":"tags"},{"type":"index","value":{"type":"number","value":0}}]],"status":"tainted"},"#,
            r#"{"attributes":{"id":"old","n":2},"deposed":"00000001","index_key":1,"private":"cHY=","schema_version":1,"sensitive_attributes":[]}"#,
            r#"],"mode":"managed","name":"a","provider":"provider[\"registry.terraform.io/hashicorp/null\"]","type":"null_resource"},"#,
            r#"{"instances":[{"attributes":{"id":"b","n":2},"create_before_destroy":true,"dependencies":["null_resource.a"],"private":"cHY=","schema_version":1,"sensitive_attributes":[]}],"#,
            r#""mode":"managed","module":"module.m[\"x\"]","name":"b","provider":"provider[\"registry.terraform.io/hashicorp/null\"]","type":"null_resource"}"#,
            r#"],"serial":7,"terraform_version":"1.9.0","version":4}"#
        );
        assert_eq!(got, want);
    }
}
