//! Round-trip properties of the cty codecs over generated types and values
//! that conform to them, with nulls and unknowns at any depth.

use super::*;
use proptest::collection::{btree_map, vec};
use proptest::prelude::*;

fn arb_type() -> impl Strategy<Value = Type> {
    let leaf = prop_oneof![
        Just(Type::Bool),
        Just(Type::Number),
        Just(Type::String),
        Just(Type::Dynamic)
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(Type::list),
            inner.clone().prop_map(Type::set),
            inner.clone().prop_map(Type::map),
            vec(inner.clone(), 0..3).prop_map(Type::Tuple),
            (btree_map("[a-z_]{1,4}", inner, 1..4), any::<u8>()).prop_map(|(attrs, bits)| {
                // Mark some attributes optional so the type JSON carries them.
                let optional = attrs
                    .keys()
                    .enumerate()
                    .filter(|(i, _)| bits & (1 << i) != 0)
                    .map(|(_, k)| k.clone())
                    .collect();
                Type::Object { attrs, optional }
            }),
        ]
    })
}

fn arb_number() -> impl Strategy<Value = Number> {
    prop_oneof![
        any::<i64>().prop_map(Number::Int),
        any::<f64>()
            .prop_filter("cty JSON has no infinities", |f| f.is_finite())
            .prop_map(Number::from_f64),
        // Integers and decimals that neither i64 nor f64 holds.
        ("-?[1-9][0-9]{18,40}", "[0-9]{0,30}").prop_map(|(int, frac)| {
            Number::parse(&format!("{int}.{frac}")).expect("decimal text")
        }),
        any::<u64>().prop_map(Number::from),
    ]
}

/// A value for a dynamic slot: any shape an untyped value can have.
fn arb_untyped(unknowns: bool) -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        any::<bool>().prop_map(Value::Bool),
        arb_number().prop_map(Value::Number),
        "\\PC{0,6}".prop_map(Value::String),
        Just(Value::null()),
    ];
    leaf.prop_recursive(2, 12, 3, move |inner| {
        let inner = if unknowns {
            prop_oneof![4 => inner, 1 => Just(Value::unknown())].boxed()
        } else {
            inner.boxed()
        };
        prop_oneof![
            vec(inner.clone(), 0..3).prop_map(Value::tuple),
            btree_map("[a-z]{1,3}", inner, 0..3).prop_map(|m| Value::Map(m.into()))
        ]
    })
    .boxed()
}

fn arb_value(ty: &Type, unknowns: bool) -> BoxedStrategy<Value> {
    let known: BoxedStrategy<Value> = match ty {
        Type::Bool => any::<bool>().prop_map(Value::Bool).boxed(),
        Type::Number => arb_number().prop_map(Value::Number).boxed(),
        Type::String => "\\PC{0,6}".prop_map(Value::String).boxed(),
        Type::Dynamic => arb_untyped(unknowns),
        Type::List(e) | Type::Set(e) => vec(arb_value(e, unknowns), 0..4)
            .prop_map(Value::tuple)
            .boxed(),
        Type::Map(e) => btree_map("[a-z]{0,3}", arb_value(e, unknowns), 0..3)
            .prop_map(|m| Value::Map(m.into()))
            .boxed(),
        Type::Tuple(ts) => ts
            .iter()
            .map(|t| arb_value(t, unknowns))
            .collect::<Vec<_>>()
            .prop_map(Value::tuple)
            .boxed(),
        Type::Object { attrs, .. } => attrs
            .iter()
            .map(|(k, t)| (Just(k.clone()), arb_value(t, unknowns)))
            .collect::<Vec<_>>()
            .prop_map(|kvs| Value::Map(kvs.into_iter().collect()))
            .boxed(),
    };
    if unknowns {
        prop_oneof![6 => known, 1 => Just(Value::null()), 1 => Just(Value::unknown())].boxed()
    } else {
        prop_oneof![6 => known, 1 => Just(Value::null())].boxed()
    }
}

fn typed_value(unknowns: bool) -> impl Strategy<Value = (Type, Value)> {
    arb_type().prop_flat_map(move |ty| {
        let v = arb_value(&ty, unknowns);
        (Just(ty), v)
    })
}

/// Whether `decoded` is `orig` after a round trip: sets may come back
/// reordered and without duplicates, everything else exactly.
fn same(ty: &Type, orig: &Value, decoded: &Value) -> bool {
    match (ty, orig, decoded) {
        (Type::Set(e), Value::List(a), Value::List(b)) => {
            b.len() <= a.len()
                && a.iter().all(|x| b.iter().any(|y| same(e, x, y)))
                && b.iter().all(|y| a.iter().any(|x| same(e, x, y)))
        }
        (Type::List(e), Value::List(a), Value::List(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(e, x, y))
        }
        (Type::Tuple(ts), Value::List(a), Value::List(b)) => {
            a.len() == b.len()
                && ts
                    .iter()
                    .zip(a.iter().zip(b))
                    .all(|(t, (x, y))| same(t, x, y))
        }
        (Type::Map(e), Value::Map(a), Value::Map(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|((ka, x), (kb, y))| ka == kb && same(e, x, y))
        }
        (Type::Object { attrs, .. }, Value::Map(a), Value::Map(b)) => {
            a.len() == b.len()
                && attrs.iter().all(
                    |(k, t)| matches!((a.get(k), b.get(k)), (Some(x), Some(y)) if same(t, x, y)),
                )
        }
        _ => orig == decoded,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn msgpack_round_trips((ty, value) in typed_value(true)) {
        let bytes = to_msgpack(&value, &ty).unwrap();
        let decoded = from_msgpack(&bytes, &ty).unwrap();
        prop_assert!(same(&ty, &value, &decoded), "{value:?} came back as {decoded:?}");
        prop_assert_eq!(to_msgpack(&decoded, &ty).unwrap(), bytes);
    }

    #[test]
    fn json_round_trips((ty, value) in typed_value(false)) {
        let bytes = to_json(&value, &ty).unwrap();
        let decoded = from_json(&bytes, &ty).unwrap();
        prop_assert!(same(&ty, &value, &decoded), "{value:?} came back as {decoded:?}");
        prop_assert_eq!(to_json(&decoded, &ty).unwrap(), bytes);
    }

    #[test]
    fn type_json_round_trips(ty in arb_type()) {
        prop_assert_eq!(type_from_json(&type_to_json(&ty)).unwrap(), ty);
    }

    #[test]
    fn msgpack_decoding_never_panics(bytes in vec(any::<u8>(), 0..64), ty in arb_type()) {
        let _ = from_msgpack(&bytes, &ty);
    }
}
