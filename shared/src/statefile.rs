//! Terraform's state file format (version 4), as `terraform state pull`
//! prints it and `terraform.tfstate` holds it.
//!
//! [`from_v4`] reads such a file back (`state push`); [`to_v4`] of what it
//! reads gives the same document.
//!
//! Written from our snapshot: one resource entry per (module instance,
//! mode, type, name), its instances with `index_key`, the deposed objects
//! as extra instances with a `deposed` key, sensitive paths in Terraform's
//! step notation and private data in base64.
//!
//! Attributes are cty JSON of the schema's type, as Terraform writes them:
//! that differs from plain JSON where the schema says `dynamic` (a
//! `terraform_data`'s `input`), whose value goes wrapped with its type
//! (`{"value": …, "type": …}`). So writing needs the provider schemas, and
//! reading without them keeps the attributes as they came, marked
//! [`ObjectState::undecoded`] until a run decodes them ([`decode_object`]).
//! Our snapshot records a resource's provider, not the provider
//! configuration it used, so the `provider` field names the root
//! module's default configuration of that provider.

use crate::addr::{
    AbsProviderConfig, AbsResource, AbsResourceInstance, InstanceKey, ModuleInstance, ProviderAddr,
    Resource, ResourceInstance, ResourceMode,
};
use crate::json::{Json, Map};
use crate::name::Name;
use crate::schema::Schema;
use crate::state::{
    CheckResult, CheckStatus, CheckedObject, InstanceState, ObjectState, ObjectStatus, OutputState,
    State,
};
use crate::types::Type;
use crate::value::Value;
use crate::value::{Number, PathStep};
use base64::Engine as _;
use std::collections::BTreeMap;

/// The Terraform version fleetform's files and JSON documents say they
/// were written by.
pub const TERRAFORM_VERSION: &str = "1.9.0-fleetform";

/// Where the writer finds an object's type: the schema of `type_name`
/// (a resource or, for [`ResourceMode::Data`], a data source) of
/// `provider` with schema version `version`, if known.
pub type SchemaLookup<'a> = &'a dyn Fn(&ProviderAddr, ResourceMode, &str, i64) -> Option<Type>;

/// The state file document for `state`; an error names an object whose
/// schema `schemas` does not know (its attributes could not be written in
/// a way Terraform reads).
pub fn to_v4(
    state: &State,
    terraform_version: &str,
    schemas: SchemaLookup<'_>,
) -> Result<Json, String> {
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
    // Resources in Terraform's order (module address text, data before
    // managed, type, name), each with its instances in key order.
    type Group<'a> = (String, bool, ModuleInstance, ResourceMode, Name, Name);
    let mut groups: BTreeMap<Group<'_>, Vec<(&AbsResourceInstance, Json)>> = BTreeMap::new();
    let mut providers: BTreeMap<Group<'_>, String> = BTreeMap::new();
    // Terraform's files list transitive dependencies; ours record the nearest.
    let closure = crate::state::DependencyClosure::of_state(state);
    for (addr, inst) in &state.resources {
        let r = &addr.resource.resource;
        let key: Group<'_> = (
            addr.module.to_string(),
            r.mode == ResourceMode::Managed,
            addr.module.clone(),
            r.mode,
            r.type_name.clone(),
            r.name.clone(),
        );
        providers
            .entry(key.clone())
            .or_insert_with(|| match state.provider_config(addr) {
                Some(crate::state::RecordedProvider::Recorded(p)) => p.to_string(),
                _ => format!("provider[\"{}\"]", inst.provider),
            });
        let list = groups.entry(key).or_default();
        let attributes = |obj: &ObjectState| {
            attributes_json(obj, &inst.provider, r, schemas).map_err(|e| format!("{addr}: {e}"))
        };
        if let Some(obj) = &inst.current {
            let attrs = attributes(obj)?;
            list.push((addr, instance(addr, obj, attrs, None, &closure)));
        }
        for (deposed, obj) in &inst.deposed {
            let attrs = attributes(obj)?;
            list.push((addr, instance(addr, obj, attrs, Some(deposed), &closure)));
        }
    }
    let mut resources = Vec::new();
    for (key, instances) in groups {
        let (_, _, module, mode, type_name, name) = &key;
        let mut entry = Map::new();
        if !module.is_root() {
            entry.insert("module".into(), Json::String(module.to_string()));
        }
        let mode = match mode {
            ResourceMode::Managed => "managed",
            ResourceMode::Data => "data",
            // Never in a state; named as Terraform names the mode.
            ResourceMode::Ephemeral => "ephemeral",
        };
        entry.insert("mode".into(), Json::String(mode.into()));
        entry.insert("type".into(), Json::String(type_name.to_string()));
        entry.insert("name".into(), Json::String(name.to_string()));
        entry.insert("provider".into(), Json::String(providers[&key].clone()));
        entry.insert(
            "instances".into(),
            Json::Array(instances.into_iter().map(|(_, j)| j).collect()),
        );
        resources.push(Json::Object(entry));
    }
    Ok(Json::object([
        ("version", Json::Number(Number::from(4i64))),
        ("terraform_version", Json::String(terraform_version.into())),
        ("serial", Json::Number(Number::from(state.serial))),
        ("lineage", Json::String(state.lineage.clone())),
        ("outputs", Json::Object(outputs)),
        ("resources", Json::Array(resources)),
        (
            "check_results",
            check_results_json(state.check_results.as_deref()),
        ),
    ]))
}

/// An object's `attributes`: cty JSON of its schema's type, or the text it
/// was read from while it is still [`ObjectState::undecoded`].
fn attributes_json(
    obj: &ObjectState,
    provider: &ProviderAddr,
    r: &Resource,
    schemas: SchemaLookup<'_>,
) -> Result<Json, String> {
    if obj.undecoded {
        return Ok(Json::from(&obj.value));
    }
    let Some(ty) = schemas(provider, r.mode, &r.type_name, obj.schema_version) else {
        let kind = match r.mode {
            ResourceMode::Managed => "resource type",
            ResourceMode::Data => "data source",
            ResourceMode::Ephemeral => "ephemeral resource type",
        };
        return Err(format!(
            "the schema of {kind} {:?} (version {}) of provider {provider} is not known, and without it the attributes cannot be written as Terraform reads them",
            r.type_name, obj.schema_version
        ));
    };
    let bytes = crate::cty::to_json(&obj.value, &ty).map_err(|e| format!("attributes: {e}"))?;
    Json::parse(&bytes).map_err(|e| format!("attributes: {e}"))
}

/// Decodes an [`ObjectState::undecoded`] object's attributes with the
/// schema its provider now has. An object of an older schema version stays
/// as it is: its shape is the older schema's, which only the provider's
/// UpgradeResourceState knows (it gets the attributes as they came, as
/// Terraform hands them over). Returns whether the object was decoded.
pub fn decode_object(obj: &mut ObjectState, schema: &Schema) -> Result<bool, String> {
    if !obj.undecoded || obj.schema_version != schema.version {
        return Ok(false);
    }
    decode_as(obj, &schema.block.implied_type())?;
    Ok(true)
}

/// Decodes an undecoded object's attributes as `ty`, the object type of
/// its schema at its schema version.
pub fn decode_as(obj: &mut ObjectState, ty: &Type) -> Result<(), String> {
    let text = Json::from(&obj.value).to_string();
    obj.value =
        crate::cty::from_json(text.as_bytes(), ty).map_err(|e| format!("attributes: {e}"))?;
    obj.undecoded = false;
    Ok(())
}

/// `check_results` as Terraform writes it (null when none were recorded).
fn check_results_json(results: Option<&[CheckResult]>) -> Json {
    let Some(results) = results else {
        return Json::Null;
    };
    let entries = results.iter().map(|r| {
        let objects = if r.objects.is_empty() {
            Json::Null
        } else {
            Json::Array(
                r.objects
                    .iter()
                    .map(|o| {
                        let mut m = Map::new();
                        m.insert("object_addr".into(), Json::String(o.object_addr.clone()));
                        m.insert("status".into(), Json::String(o.status.as_str().into()));
                        if !o.failure_messages.is_empty() {
                            m.insert(
                                "failure_messages".into(),
                                Json::Array(
                                    o.failure_messages
                                        .iter()
                                        .cloned()
                                        .map(Json::String)
                                        .collect(),
                                ),
                            );
                        }
                        Json::Object(m)
                    })
                    .collect(),
            )
        };
        Json::object([
            ("object_kind", Json::String(r.object_kind.clone())),
            ("config_addr", Json::String(r.config_addr.clone())),
            ("status", Json::String(r.status.as_str().into())),
            ("objects", objects),
        ])
    });
    Json::Array(entries.collect())
}

/// A state file's `check_results`, read back.
fn read_check_results(doc: &Json) -> Result<Option<Vec<CheckResult>>, String> {
    let items = match doc {
        Json::Null => return Ok(None),
        Json::Array(items) => items,
        _ => return Err("\"check_results\" is not a list".into()),
    };
    let text = |j: &Json, key: &str, at: &str| -> Result<String, String> {
        j.get(key)
            .and_then(Json::as_str)
            .map(str::to_string)
            .ok_or(format!("{at}: no \"{key}\""))
    };
    let status = |j: &Json, at: &str| -> Result<CheckStatus, String> {
        let s = text(j, "status", at)?;
        CheckStatus::parse(&s).ok_or(format!("{at}: unknown status {s:?}"))
    };
    let mut out = Vec::new();
    for (i, r) in items.iter().enumerate() {
        let at = format!("check_results[{i}]");
        let mut objects = Vec::new();
        match r.get("objects") {
            None | Some(Json::Null) => {}
            Some(Json::Array(list)) => {
                for (j, o) in list.iter().enumerate() {
                    let at = format!("{at}.objects[{j}]");
                    let failure_messages = match o.get("failure_messages") {
                        None | Some(Json::Null) => Vec::new(),
                        Some(Json::Array(m)) => m
                            .iter()
                            .map(|x| x.as_str().map(str::to_string))
                            .collect::<Option<Vec<_>>>()
                            .ok_or(format!("{at}.failure_messages: not a list of strings"))?,
                        Some(_) => return Err(format!("{at}.failure_messages: not a list")),
                    };
                    objects.push(CheckedObject {
                        object_addr: text(o, "object_addr", &at)?,
                        status: status(o, &at)?,
                        failure_messages,
                    });
                }
            }
            Some(_) => return Err(format!("{at}.objects: not a list")),
        }
        out.push(CheckResult {
            object_kind: text(r, "object_kind", &at)?,
            config_addr: text(r, "config_addr", &at)?,
            status: status(r, &at)?,
            objects,
        });
    }
    Ok(Some(out))
}

fn instance(
    addr: &AbsResourceInstance,
    obj: &ObjectState,
    attributes: Json,
    deposed: Option<&String>,
    closure: &crate::state::DependencyClosure,
) -> Json {
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
    m.insert("attributes".into(), attributes);
    m.insert(
        "sensitive_attributes".into(),
        // The values' marks only, as Terraform records them (see
        // `ObjectState::value_sensitive_paths`).
        Json::Array(
            obj.value_sensitive_paths
                .as_ref()
                .unwrap_or(&obj.sensitive_paths)
                .iter()
                .map(|p| path(p))
                .collect(),
        ),
    );
    if !obj.private.is_empty() {
        m.insert(
            "private".into(),
            Json::String(base64::engine::general_purpose::STANDARD.encode(&obj.private)),
        );
    }
    if !obj.dependencies.is_empty() {
        let mut deps: Vec<String> = closure
            .of(&obj.dependencies)
            .iter()
            .map(|d| d.to_string())
            .collect();
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

/// Reads a Terraform state file (version 4); the error says what is wrong
/// and where (`resources[3].instances[0].index_key`).
pub fn from_v4(doc: &Json) -> Result<State, String> {
    let obj = doc.as_object().ok_or("not a JSON object")?;
    match obj.get("version").map(|v| v.to_string()) {
        Some(v) if v == "4" => {}
        Some(v) => {
            return Err(format!(
                "state format version {v} is not supported: fleetform reads version 4 (written by Terraform 0.12 and later, and OpenTofu); upgrade the state with that Terraform first"
            ));
        }
        None => return Err("no \"version\": not a Terraform state file".into()),
    }
    let mut state = State::new(
        obj.get("lineage")
            .and_then(Json::as_str)
            .ok_or("no \"lineage\"")?,
    );
    state.serial = obj
        .get("serial")
        .and_then(|s| s.to_string().parse().ok())
        .ok_or("\"serial\" is not a whole number")?;
    if let Some(outputs) = obj.get("outputs").and_then(Json::as_object) {
        for (name, o) in outputs {
            let value = o.get("value").ok_or(format!("outputs.{name}: no value"))?;
            let sensitive = matches!(o.get("sensitive"), Some(Json::Bool(true)));
            // The type says what the JSON is (a set, a map, a number).
            let value = match o.get("type") {
                None | Some(Json::Null) => Value::from(value),
                Some(ty) => {
                    let ty = crate::cty::type_from_json(ty.to_string().as_bytes())
                        .map_err(|e| format!("outputs.{name}.type: {e}"))?;
                    crate::cty::from_json(value.to_string().as_bytes(), &ty)
                        .map_err(|e| format!("outputs.{name}.value: {e}"))?
                }
            };
            state
                .outputs
                .insert(name.clone(), OutputState { value, sensitive });
        }
    }
    let resources = match obj.get("resources") {
        None | Some(Json::Null) => &Vec::new(),
        Some(r) => r.as_array().ok_or("\"resources\" is not a list")?,
    };
    for (i, r) in resources.iter().enumerate() {
        read_resource(&mut state, r).map_err(|e| format!("resources[{i}]{e}"))?;
    }
    if let Some(c) = obj.get("check_results") {
        state.check_results = read_check_results(c)?;
    }
    Ok(state)
}

fn field<'a>(obj: &'a Json, name: &str) -> Result<&'a str, String> {
    obj.get(name)
        .and_then(Json::as_str)
        .ok_or_else(|| format!(".{name}: missing or not a string"))
}

fn read_resource(state: &mut State, r: &Json) -> Result<(), String> {
    let module: ModuleInstance = match r.get("module").and_then(Json::as_str) {
        Some(m) => m.parse().map_err(|e| format!(".module: {e:?}"))?,
        None => ModuleInstance::root(),
    };
    let mode = match field(r, "mode")? {
        "managed" => ResourceMode::Managed,
        "data" => ResourceMode::Data,
        other => return Err(format!(".mode: {other:?} is neither managed nor data")),
    };
    let resource = Resource {
        mode,
        type_name: field(r, "type")?.into(),
        name: field(r, "name")?.into(),
    };
    let provider: AbsProviderConfig = field(r, "provider")?
        .parse()
        .map_err(|e| format!(".provider: {e:?}"))?;
    let instances = r
        .get("instances")
        .and_then(Json::as_array)
        .ok_or(".instances: missing or not a list")?;
    for (j, inst) in instances.iter().enumerate() {
        let at = |e: String| format!(".instances[{j}]{e}");
        let key = match inst.get("index_key") {
            None | Some(Json::Null) => InstanceKey::None,
            Some(Json::String(s)) => InstanceKey::Str(s.clone()),
            Some(n @ Json::Number(_)) => InstanceKey::Int(
                n.to_string()
                    .parse()
                    .map_err(|_| at(".index_key: not a whole number".into()))?,
            ),
            Some(_) => return Err(at(".index_key: neither a number nor a string".into())),
        };
        let addr = AbsResourceInstance {
            module: module.clone(),
            resource: ResourceInstance {
                resource: resource.clone(),
                key,
            },
        };
        let object = read_object(inst).map_err(at)?;
        state
            .provider_configs
            .insert(addr.config_resource(), provider.clone());
        let entry = state
            .resources
            .entry(addr)
            .or_insert_with(|| InstanceState {
                provider: provider.provider.clone(),
                current: None,
                deposed: BTreeMap::new(),
            });
        match inst.get("deposed").and_then(Json::as_str) {
            Some(d) => {
                entry.deposed.insert(d.to_string(), object);
            }
            None => entry.current = Some(object),
        }
    }
    Ok(())
}

fn read_object(inst: &Json) -> Result<ObjectState, String> {
    if inst.get("attributes_flat").is_some() && inst.get("attributes").is_none() {
        return Err(": attributes_flat (a state upgraded from Terraform 0.11) is not supported; refresh it with Terraform 0.12+ first".into());
    }
    let value = Value::from(inst.get("attributes").ok_or(".attributes: missing")?);
    let schema_version = inst
        .get("schema_version")
        .map_or(Ok(0), |v| v.to_string().parse::<i64>())
        .map_err(|_| ".schema_version: not a whole number".to_string())?;
    let status = match inst.get("status").and_then(Json::as_str) {
        None => ObjectStatus::Ready,
        Some("tainted") => ObjectStatus::Tainted,
        Some(other) => return Err(format!(".status: {other:?} is not \"tainted\"")),
    };
    let private = match inst.get("private").and_then(Json::as_str) {
        None => Vec::new(),
        Some(b) => base64::engine::general_purpose::STANDARD
            .decode(b)
            .map_err(|e| format!(".private: not base64 ({e})"))?,
    };
    let mut dependencies = Vec::new();
    for d in inst
        .get("dependencies")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
    {
        let text = d.as_str().ok_or(".dependencies: not a string")?;
        let dep: AbsResource = text
            .parse()
            .map_err(|e| format!(".dependencies: {text:?}: {e:?}"))?;
        dependencies.push(dep);
    }
    let mut sensitive_paths = Vec::new();
    for p in inst
        .get("sensitive_attributes")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
    {
        sensitive_paths.push(read_path(p)?);
    }
    Ok(ObjectState {
        value,
        private,
        schema_version,
        status,
        dependencies,
        create_before_destroy: matches!(inst.get("create_before_destroy"), Some(Json::Bool(true))),
        value_sensitive_paths: Some(sensitive_paths.clone()),
        sensitive_paths,
        undecoded: true,
    })
}

fn read_path(p: &Json) -> Result<Vec<PathStep>, String> {
    let bad = || ".sensitive_attributes: not a list of path steps".to_string();
    let mut out = Vec::new();
    for step in p.as_array().ok_or_else(bad)? {
        match step.get("type").and_then(Json::as_str) {
            Some("get_attr") => out.push(PathStep::Key(
                step.get("value")
                    .and_then(Json::as_str)
                    .ok_or_else(bad)?
                    .to_string(),
            )),
            Some("index") => {
                let v = step.get("value").ok_or_else(bad)?;
                match v.get("type").and_then(Json::as_str) {
                    Some("number") => out.push(PathStep::Index(
                        v.get("value")
                            .and_then(|n| n.to_string().parse().ok())
                            .ok_or_else(bad)?,
                    )),
                    Some("string") => out.push(PathStep::Key(
                        v.get("value")
                            .and_then(Json::as_str)
                            .ok_or_else(bad)?
                            .to_string(),
                    )),
                    _ => return Err(bad()),
                }
            }
            _ => return Err(bad()),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addr::{AbsResource, ProviderAddr};
    use crate::state::{OutputState, StateDelta};
    use crate::value::Value;

    /// The schemas of the test objects' types (any version), none dynamic:
    /// their attributes are written as plain JSON.
    pub(super) fn known(_: &ProviderAddr, mode: ResourceMode, ty: &str, _: i64) -> Option<Type> {
        let attrs: &[(&str, Type)] = match (mode, ty) {
            (ResourceMode::Managed, "null_resource") => {
                &[("id", Type::String), ("triggers", Type::map(Type::String))]
            }
            (ResourceMode::Data, "null_data_source") => {
                &[("id", Type::String), ("big", Type::Number)]
            }
            (ResourceMode::Managed, "random_pet") => &[
                ("id", Type::String),
                ("prefix", Type::String),
                ("result", Type::String),
            ],
            _ => return None,
        };
        Some(Type::object(attrs.iter().cloned()))
    }

    /// `state` as [`from_v4`] gives it back: every object undecoded.
    /// `state` as a state file written from it reads: objects undecoded,
    /// and every resource's provider configuration recorded (the root's
    /// default where none was).
    pub(super) fn as_read(mut state: State) -> State {
        for (addr, inst) in state.resources.iter_mut() {
            for obj in inst.current.iter_mut().chain(inst.deposed.values_mut()) {
                obj.undecoded = true;
            }
            state
                .provider_configs
                .entry(addr.config_resource())
                .or_insert_with(|| crate::addr::AbsProviderConfig {
                    module: crate::addr::Module::root(),
                    provider: inst.provider.clone(),
                    alias: None,
                });
        }
        state
    }

    fn object(id: &str, deps: Vec<AbsResource>) -> ObjectState {
        ObjectState {
            value: Value::object([
                ("id", Value::from(id)),
                ("triggers", Value::object([("n", Value::from("2"))])),
            ]),
            private: b"pv".to_vec(),
            schema_version: 1,
            status: ObjectStatus::Ready,
            dependencies: deps,
            create_before_destroy: false,
            sensitive_paths: vec![],
            value_sensitive_paths: Some(vec![]),
            undecoded: false,
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
        tainted.value_sensitive_paths = Some(tainted.sensitive_paths.clone());
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
                value: Value::tuple(vec![Value::from("x")]),
                sensitive: true,
            },
        );
        let doc = to_v4(&s, "1.9.0", &known).unwrap();
        // Read back, it is the same state, object for object.
        assert_eq!(from_v4(&doc).unwrap(), as_read(s));
        let got = doc.to_string();
        let want = concat!(
            r#"{"check_results":null,"lineage":"lin","#,
            r#""outputs":{"o":{"sensitive":true,"type":["tuple",["string"]],"value":["x"]}},"#,
            r#""resources":["#,
            r#"{"instances":["#,
            r#"{"attributes":{"id":"a1","triggers":{"n":"2"}},"index_key":1,"private":"cHY=","schema_version":1,"#,
            r#""sensitive_attributes":[[{"type":"get_attr","value":"tags"},{"type":"index","value":{"type":"number","value":0}}]],"status":"tainted"},"#,
            r#"{"attributes":{"id":"old","triggers":{"n":"2"}},"deposed":"00000001","index_key":1,"private":"cHY=","schema_version":1,"sensitive_attributes":[]}"#,
            r#"],"mode":"managed","name":"a","provider":"provider[\"registry.terraform.io/hashicorp/null\"]","type":"null_resource"},"#,
            r#"{"instances":[{"attributes":{"id":"b","triggers":{"n":"2"}},"create_before_destroy":true,"dependencies":["null_resource.a"],"private":"cHY=","schema_version":1,"sensitive_attributes":[]}],"#,
            r#""mode":"managed","module":"module.m[\"x\"]","name":"b","provider":"provider[\"registry.terraform.io/hashicorp/null\"]","type":"null_resource"}"#,
            r#"],"serial":7,"terraform_version":"1.9.0","version":4}"#
        );
        assert_eq!(got, want);
    }

    /// A state file's check_results, as Terraform 1.x writes them, come
    /// back the same.
    #[test]
    fn check_results_round_trip() {
        let text = r#"{"version":4,"terraform_version":"1.11.4","serial":3,"lineage":"l","outputs":{},"resources":[],
          "check_results":[
            {"object_kind":"resource","config_addr":"null_resource.a","status":"fail","objects":[
              {"object_addr":"null_resource.a[0]","status":"pass"},
              {"object_addr":"null_resource.a[1]","status":"fail","failure_messages":["too big"]}]},
            {"object_kind":"check","config_addr":"check.health","status":"unknown","objects":null}]}"#;
        let doc = Json::parse(text.as_bytes()).unwrap();
        let state = from_v4(&doc).unwrap();
        let results = state.check_results.as_ref().unwrap();
        assert_eq!(results.len(), 2);
        assert_eq!(results[0].status, CheckStatus::Fail);
        assert_eq!(results[0].objects[1].failure_messages, vec!["too big"]);
        assert!(results[1].objects.is_empty());
        let back = to_v4(&state, "1.11.4", &tests::known).unwrap();
        assert_eq!(back.get("check_results"), doc.get("check_results"));
        let bad = Json::parse(
            br#"{"version":4,"serial":1,"lineage":"l","check_results":[{"object_kind":"resource","config_addr":"x.y","status":"maybe"}]}"#,
        )
        .unwrap();
        let e = from_v4(&bad).unwrap_err();
        assert!(e.contains("unknown status \"maybe\""), "{e}");
        assert_eq!(
            CheckStatus::aggregate([CheckStatus::Pass, CheckStatus::Unknown]),
            CheckStatus::Unknown
        );
        assert_eq!(
            CheckStatus::aggregate([CheckStatus::Fail, CheckStatus::Unknown]),
            CheckStatus::Fail
        );
    }
}

#[cfg(test)]
mod read_tests {
    use super::*;

    #[test]
    fn a_terraform_state_reads_and_writes_back_the_same() {
        let text = r#"{"version":4,"terraform_version":"0.15.5","serial":12,"lineage":"l-1",
          "outputs":{"ip":{"value":"10.0.0.1","type":"string"},"k":{"value":[1,2],"type":["list","number"],"sensitive":true}},
          "resources":[
            {"mode":"managed","type":"null_resource","name":"a",
             "provider":"provider[\"registry.terraform.io/hashicorp/null\"].two",
             "instances":[{"index_key":"x","schema_version":0,"attributes":{"id":"123","triggers":{"t":"1"}},
                           "sensitive_attributes":[],"private":"bnVsbA==","dependencies":["null_resource.b"]}]},
            {"module":"module.m[0]","mode":"data","type":"null_data_source","name":"d",
             "provider":"module.m.provider[\"registry.terraform.io/hashicorp/null\"]",
             "instances":[{"schema_version":0,"attributes":{"id":"static","big":123456789012345678901234567890},"sensitive_attributes":[]}]}
          ],"check_results":null}"#;
        let doc = Json::parse(text.as_bytes()).unwrap();
        let state = from_v4(&doc).unwrap();
        assert_eq!((state.serial, state.lineage.as_str()), (12, "l-1"));
        assert_eq!(state.resources.len(), 2);
        assert!(state.outputs["k"].sensitive);
        let a: AbsResourceInstance = "null_resource.a[\"x\"]".parse().unwrap();
        let obj = state.current(&a).unwrap();
        assert_eq!(obj.private, b"null");
        assert_eq!(obj.dependencies.len(), 1);
        // Numbers keep every digit.
        let d: AbsResourceInstance = "module.m[0].data.null_data_source.d".parse().unwrap();
        assert_eq!(
            Json::from(state.current(&d).unwrap().value.get_attr("big")).to_string(),
            "123456789012345678901234567890"
        );
        // Written back: the same resources and outputs.
        let again = to_v4(&state, "1.9.0", &tests::known).unwrap();
        assert_eq!(from_v4(&again).unwrap(), state);
        // Each resource keeps its provider configuration: a module's, an alias.
        assert_eq!(again.get("resources"), doc.get("resources"));
    }

    #[test]
    fn bad_files_say_what_and_where() {
        let err = |t: &str| from_v4(&Json::parse(t.as_bytes()).unwrap()).unwrap_err();
        assert!(
            err(r#"{"version":3,"serial":1,"lineage":"x"}"#).contains("version 3 is not supported")
        );
        assert!(err(r#"{"serial":1}"#).contains("not a Terraform state file"));
        let e = err(
            r#"{"version":4,"serial":1,"lineage":"x","resources":[{"mode":"managed","type":"t","name":"n","provider":"provider[\"a/b\"]","instances":[{"index_key":true,"attributes":{}}]}]}"#,
        );
        assert_eq!(
            e,
            "resources[0].instances[0].index_key: neither a number nor a string"
        );
    }
}

#[cfg(test)]
mod value_marks_tests {
    use super::*;
    use crate::value::PathStep;

    /// A state file records the values' marks only, as Terraform does; the
    /// schema's sensitive attributes stay out (Terraform 0.15 plans an
    /// update of an object whose recorded marks include them).
    #[test]
    fn only_value_marks_go_to_sensitive_attributes_and_come_back() {
        let key = |k: &str| vec![PathStep::Key(k.into())];
        let mut state = State::new("l");
        state.serial = 3;
        state.resources.insert(
            "random_pet.p".parse().unwrap(),
            crate::state::InstanceState {
                provider: crate::addr::ProviderAddr::implied("random"),
                current: Some(ObjectState {
                    value: crate::value::Value::object([
                        ("id", crate::value::Value::from("x")),
                        ("prefix", crate::value::Value::from("s")),
                        ("result", crate::value::Value::from("r")),
                    ]),
                    private: vec![],
                    schema_version: 0,
                    status: ObjectStatus::Ready,
                    dependencies: vec![],
                    create_before_destroy: false,
                    sensitive_paths: vec![key("prefix"), key("result")],
                    value_sensitive_paths: Some(vec![key("prefix")]),
                    undecoded: false,
                }),
                deposed: Default::default(),
            },
        );
        let doc = to_v4(&state, "0.15.0", &tests::known).unwrap();
        let text = doc.to_string();
        assert!(
            text.contains(r#""sensitive_attributes":[[{"type":"get_attr","value":"prefix"}]]"#),
            "{text}"
        );
        let back = from_v4(&doc).unwrap();
        let obj = back
            .resources
            .values()
            .next()
            .unwrap()
            .current
            .clone()
            .unwrap();
        assert_eq!(obj.value_sensitive_paths, Some(vec![key("prefix")]));
        // Pulled again: the same document.
        assert_eq!(
            to_v4(&back, "0.15.0", &tests::known).unwrap().to_string(),
            text
        );
        // A state recorded before the two were kept apart writes them all.
        let mut old = state.clone();
        for i in old.resources.values_mut() {
            i.current.as_mut().unwrap().value_sensitive_paths = None;
        }
        assert!(
            to_v4(&old, "0.15.0", &tests::known)
                .unwrap()
                .to_string()
                .contains(r#"{"type":"get_attr","value":"result"}"#)
        );
    }
}

#[cfg(test)]
mod dynamic_tests {
    use super::*;
    use crate::schema::{Attribute, Block};

    fn terraform_data_schema() -> Schema {
        let mut block = Block::default();
        block
            .attributes
            .insert("id".into(), Attribute::new(Type::String).computed());
        for name in ["input", "output", "triggers_replace"] {
            block
                .attributes
                .insert(name.into(), Attribute::new(Type::Dynamic).optional());
        }
        Schema { version: 0, block }
    }

    /// A `terraform_data` as Terraform 1.11.4 wrote it: its dynamic
    /// attributes carry their types. Read, it is undecoded and written back
    /// as it came; decoded with the schema, its values are plain; written
    /// again through the schema, the wrappers are back, the same text.
    #[test]
    fn dynamic_attributes_are_unwrapped_by_the_schema_and_wrapped_again() {
        let text = r#"{"version":4,"terraform_version":"1.11.4","serial":2,"lineage":"l","outputs":{
            "s":{"value":["x"],"type":["set","string"],"sensitive":true}},
          "resources":[{"mode":"managed","type":"terraform_data","name":"d",
            "provider":"provider[\"terraform.io/builtin/terraform\"]",
            "instances":[{"schema_version":0,"attributes":{"id":"i-1",
              "input":{"value":{"n":1,"pets":["a","b"]},"type":["object",{"n":"number","pets":["tuple",["string","string"]]}]},
              "output":{"value":{"n":1,"pets":["a","b"]},"type":["object",{"n":"number","pets":["tuple",["string","string"]]}]},
              "triggers_replace":null},"sensitive_attributes":[]}]}],"check_results":null}"#;
        let doc = Json::parse(text.as_bytes()).unwrap();
        let mut state = from_v4(&doc).unwrap();
        let addr: AbsResourceInstance = "terraform_data.d".parse().unwrap();
        let none = |_: &ProviderAddr, _: ResourceMode, _: &str, _: i64| None;
        // Undecoded, it needs no schema to be written back.
        assert_eq!(
            to_v4(&state, "1.11.4", &none).unwrap().get("resources"),
            doc.get("resources")
        );
        let schema = terraform_data_schema();
        let obj = state
            .resources
            .get_mut(&addr)
            .unwrap()
            .current
            .as_mut()
            .unwrap();
        assert!(decode_object(obj, &schema).unwrap());
        assert!(!obj.undecoded);
        let pets = Value::tuple(vec![Value::from("a"), Value::from("b")]);
        assert_eq!(
            obj.value.get_attr("input"),
            &Value::object([("n", Value::int(1)), ("pets", pets)])
        );
        assert_eq!(obj.value.get_attr("triggers_replace"), &Value::null());
        // Decoded, writing it takes the schema, and says so without one.
        let e = to_v4(&state, "1.11.4", &none).unwrap_err();
        assert!(
            e.starts_with("terraform_data.d: the schema of resource type \"terraform_data\""),
            "{e}"
        );
        let ty = schema.block.implied_type();
        let known = |_: &ProviderAddr, _: ResourceMode, t: &str, _: i64| {
            (t == "terraform_data").then(|| ty.clone())
        };
        let back = to_v4(&state, "1.11.4", &known).unwrap();
        assert_eq!(back.get("resources"), doc.get("resources"));
        // Outputs are read with their type. Written, the type is the
        // value's own, which for a set is a tuple until values carry their
        // types.
        assert_eq!(
            state.outputs["s"].value,
            Value::tuple(vec![Value::from("x")])
        );
        assert!(state.outputs["s"].sensitive);
    }

    /// An object of another schema version is left for the provider's
    /// upgrade, as it came.
    #[test]
    fn an_older_schema_version_stays_undecoded() {
        let mut obj = ObjectState {
            undecoded: true,
            ..ObjectState::new(Value::object([("id", Value::from("x"))]))
        };
        let mut schema = terraform_data_schema();
        schema.version = 1;
        assert!(!decode_object(&mut obj, &schema).unwrap());
        assert!(obj.undecoded);
    }
}
