//! Whether two values are the same in every respect, the types they carry
//! included: `==` ignores those (cty's nulls are equal whatever their
//! types, and a plan must not show a change that is only a type's name),
//! so it cannot say when one value may stand in for another. This can:
//! the plan walk uses it to keep one copy of an object that a read and a
//! plan gave back unchanged, instead of three.

use super::{Number, Value, ValueMap};

impl Value {
    /// True when `other` may replace `self` anywhere: equal, with the same
    /// types carried by every null, unknown and collection inside, and
    /// numbers of the same written form.
    pub fn identical(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Null(a), Value::Null(b)) | (Value::Unknown(a), Value::Unknown(b)) => {
                a.get() == b.get()
            }
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Number(a), Value::Number(b)) => a.identical(b),
            (Value::String(a), Value::String(b)) => a == b,
            (Value::List(a), Value::List(b)) => {
                a.ty() == b.ty()
                    && a.len() == b.len()
                    && a.iter().zip(b.iter()).all(|(x, y)| x.identical(y))
            }
            (Value::Map(a), Value::Map(b)) => a.identical(b),
            _ => false,
        }
    }
}

impl ValueMap {
    fn identical(&self, other: &ValueMap) -> bool {
        if self.ty() != other.ty() {
            return false;
        }
        if self.shares_entries(other) {
            return true;
        }
        self.len() == other.len()
            && self
                .iter()
                .zip(other.iter())
                .all(|((k, v), (l, w))| k == l && v.identical(w))
    }
}

impl Number {
    fn identical(&self, other: &Number) -> bool {
        match (self, other) {
            (Number::Int(a), Number::Int(b)) => a == b,
            (Number::Float(a), Number::Float(b)) => a.to_bits() == b.to_bits(),
            // Equal decimals may be written apart ("1.0", "1"): the same
            // text only.
            (Number::Big(_), Number::Big(_)) => self.to_string() == other.to_string(),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::types::Type;
    use crate::value::{Number, Value, ValueList};

    #[test]
    fn equal_values_of_other_types_are_not_identical() {
        let a = Value::object([
            ("x", Value::string("a")),
            ("n", Value::null_of(Type::String)),
        ]);
        let b = Value::object([
            ("x", Value::string("a")),
            ("n", Value::null_of(Type::Number)),
        ]);
        assert_eq!(a, b);
        assert!(!a.identical(&b));
        assert!(a.identical(&a.clone()));
        // Built apart, not shared: compared entry by entry.
        let c = Value::object([
            ("x", Value::string("a")),
            ("n", Value::null_of(Type::String)),
        ]);
        assert!(a.identical(&c));

        let list = Value::List(ValueList::from(vec![Value::string("a")]));
        let set = Value::List(ValueList::typed(
            vec![Value::string("a")],
            Type::set(Type::String),
        ));
        assert_eq!(list, set);
        assert!(!list.identical(&set));
        assert!(set.identical(&set.clone()));

        let map = Value::object([("k", Value::string("v"))]);
        let typed = match &map {
            Value::Map(m) => Value::Map(m.clone().typed(Type::map(Type::String))),
            _ => unreachable!(),
        };
        assert_eq!(map, typed);
        assert!(!map.identical(&typed));
        assert!(!Value::string("a").identical(&Value::string("b")));
        assert!(
            !Value::object([("x", Value::string("a"))])
                .identical(&Value::object([("y", Value::string("a"))]))
        );
    }

    #[test]
    fn numbers_are_identical_only_in_one_written_form() {
        let int = Value::Number(Number::Int(1));
        let float = Value::Number(Number::Float(1.0));
        assert_eq!(int, float);
        assert!(!int.identical(&float));
        assert!(int.identical(&Value::int(1)));
        let big = Value::Number(Number::parse("123456789012345678901234567890.5").unwrap());
        assert!(matches!(big, Value::Number(Number::Big(_))));
        assert!(!big.identical(&Value::Number(
            Number::parse("123456789012345678901234567890.6").unwrap()
        )));
        assert!(big.identical(&big.clone()));
    }
}
