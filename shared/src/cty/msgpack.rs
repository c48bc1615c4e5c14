//! cty's msgpack encoding (go-cty `msgpack` package), driven by the type.
//!
//! Unknowns are the extension type 0 (`d4 00 00`); refined unknowns arrive as
//! extension type 12 and decode as plain unknowns. A `dynamic` value is a
//! two-element array: its type as JSON bytes, then the value of that type
//! (a typed null or unknown too). A null or unknown decodes with the type
//! the schema gives it.

use super::CodecError;
use super::{
    Path, WireNumber, infer_type, object_attrs, type_from_json, type_to_json, wire_number,
};
use crate::types::Type;
use crate::value::{Number, Value, ValueMap};
use rmp::Marker;
use rmp::encode as enc;

/// cty's extension type for an unknown value.
const UNKNOWN_EXT: i8 = 0;
/// cty's extension type for an unknown value carrying refinements.
const REFINED_UNKNOWN_EXT: i8 = 12;

pub(super) fn encode(value: &Value, ty: &Type) -> Result<Vec<u8>, CodecError> {
    let mut out = Vec::new();
    write_value(&mut out, value, ty, &mut Path::default())?;
    Ok(out)
}

pub(super) fn decode(bytes: &[u8], ty: &Type) -> Result<Value, CodecError> {
    let mut dec = Decoder {
        buf: bytes,
        pos: 0,
        path: Path::default(),
    };
    let value = dec.value(ty)?;
    if dec.pos != bytes.len() {
        return Err(dec.path.error(format!(
            "{} trailing bytes after the value",
            bytes.len() - dec.pos
        )));
    }
    Ok(value)
}

/// Writes into a `Vec`, which cannot fail; rmp's signatures are generic over writers that can.
fn infallible<T, E: std::fmt::Debug>(r: Result<T, E>) {
    r.expect("writing msgpack to a Vec cannot fail");
}

fn len_u32(len: usize, path: &Path) -> Result<u32, CodecError> {
    u32::try_from(len).map_err(|_| path.error("collection too large for msgpack"))
}

fn write_value(
    out: &mut Vec<u8>,
    value: &Value,
    ty: &Type,
    path: &mut Path,
) -> Result<(), CodecError> {
    match value {
        // cty writes a typed null or unknown where the type says `dynamic`
        // with its type, as any other value; an untyped one as it is.
        Value::Null(t) | Value::Unknown(t) if *ty == Type::Dynamic && !t.is_dynamic() => {}
        Value::Unknown(_) => {
            infallible(enc::write_ext_meta(out, 1, UNKNOWN_EXT));
            out.push(0);
            return Ok(());
        }
        Value::Null(_) => {
            infallible(enc::write_nil(out));
            return Ok(());
        }
        _ => {}
    }
    match (ty, value) {
        (Type::Dynamic, _) => {
            let inner = infer_type(value);
            infallible(enc::write_array_len(out, 2));
            infallible(enc::write_bin(out, &type_to_json(&inner)));
            write_value(out, value, &inner, path)
        }
        (Type::Bool, Value::Bool(b)) => {
            infallible(enc::write_bool(out, *b));
            Ok(())
        }
        (Type::Number, Value::Number(n)) => {
            match wire_number(n) {
                WireNumber::Int(i) => infallible(enc::write_sint(out, i)),
                WireNumber::Float(f) => infallible(enc::write_f64(out, f)),
                WireNumber::Text(t) => infallible(enc::write_str(out, &t)),
            }
            Ok(())
        }
        (Type::String, Value::String(s)) => {
            infallible(enc::write_str(out, s));
            Ok(())
        }
        (Type::List(elem), Value::List(items)) => {
            infallible(enc::write_array_len(out, len_u32(items.len(), path)?));
            for (i, item) in items.iter().enumerate() {
                path.push_index(i);
                write_value(out, item, elem, path)?;
                path.pop();
            }
            Ok(())
        }
        (Type::Set(elem), Value::List(items)) => write_set(out, items, elem, path),
        (Type::Tuple(elems), Value::List(items)) => {
            if elems.len() != items.len() {
                return Err(path.error(format!(
                    "expected {} tuple elements, found {}",
                    elems.len(),
                    items.len()
                )));
            }
            infallible(enc::write_array_len(out, len_u32(items.len(), path)?));
            for (i, (item, elem)) in items.iter().zip(elems).enumerate() {
                path.push_index(i);
                write_value(out, item, elem, path)?;
                path.pop();
            }
            Ok(())
        }
        (Type::Map(elem), Value::Map(items)) => {
            infallible(enc::write_map_len(out, len_u32(items.len(), path)?));
            for (k, v) in items {
                infallible(enc::write_str(out, k));
                path.push_key(k);
                write_value(out, v, elem, path)?;
                path.pop();
            }
            Ok(())
        }
        (Type::Object { attrs, .. }, _) => {
            let items = object_attrs(value, ty, attrs, path)?;
            infallible(enc::write_map_len(out, len_u32(attrs.len(), path)?));
            for (k, aty) in attrs {
                infallible(enc::write_str(out, k));
                path.push_key(k);
                write_value(out, items.get(k).unwrap_or(&Value::null()), aty, path)?;
                path.pop();
            }
            Ok(())
        }
        _ => Err(path.mismatch(ty, value.kind())),
    }
}

/// Sets go out in a deterministic order (sorted by encoding) without
/// duplicates, so equal sets encode to equal bytes. Elements containing
/// unknowns are never merged: two unknowns may turn out to differ.
fn write_set(
    out: &mut Vec<u8>,
    items: &[Value],
    elem: &Type,
    path: &mut Path,
) -> Result<(), CodecError> {
    let mut encoded = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let mut buf = Vec::new();
        path.push_index(i);
        write_value(&mut buf, item, elem, path)?;
        path.pop();
        encoded.push((buf, item.is_wholly_known()));
    }
    encoded.sort();
    encoded.dedup_by(|a, b| a.1 && b.1 && a.0 == b.0);
    infallible(enc::write_array_len(out, len_u32(encoded.len(), path)?));
    for (buf, _) in encoded {
        out.extend_from_slice(&buf);
    }
    Ok(())
}

struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
    path: Path,
}

impl<'a> Decoder<'a> {
    fn peek(&self) -> Result<Marker, CodecError> {
        self.buf
            .get(self.pos)
            .map(|b| Marker::from_u8(*b))
            .ok_or_else(|| self.path.error("unexpected end of msgpack"))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], CodecError> {
        let end = self.pos.checked_add(n).filter(|end| *end <= self.buf.len());
        let Some(end) = end else {
            return Err(self.path.error("unexpected end of msgpack"));
        };
        let bytes = &self.buf[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }

    fn be(&mut self, n: usize) -> Result<u64, CodecError> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |acc, b| (acc << 8) | u64::from(*b)))
    }

    fn value(&mut self, ty: &Type) -> Result<Value, CodecError> {
        match self.peek()? {
            Marker::Null => {
                self.pos += 1;
                return Ok(Value::null_of(ty.clone()));
            }
            Marker::FixExt1
            | Marker::FixExt2
            | Marker::FixExt4
            | Marker::FixExt8
            | Marker::FixExt16
            | Marker::Ext8
            | Marker::Ext16
            | Marker::Ext32 => {
                self.unknown()?;
                return Ok(Value::unknown_of(ty.clone()));
            }
            _ => {}
        }
        match ty {
            Type::Dynamic => self.dynamic(),
            Type::Bool => match self.marker()? {
                Marker::True => Ok(Value::Bool(true)),
                Marker::False => Ok(Value::Bool(false)),
                m => Err(self.unexpected(ty, m)),
            },
            Type::Number => self.number().map(Value::Number),
            Type::String => self.string(ty).map(Value::String),
            Type::List(elem) | Type::Set(elem) => {
                let len = self.array_len(ty)?;
                let mut items = Vec::with_capacity(len.min(4096));
                for i in 0..len {
                    self.path.push_index(i);
                    items.push(self.value(elem)?);
                    self.path.pop();
                }
                Ok(Value::typed_list(items, ty.clone()))
            }
            Type::Tuple(elems) => {
                let len = self.array_len(ty)?;
                if len != elems.len() {
                    return Err(self.path.error(format!(
                        "expected {} tuple elements, found {len}",
                        elems.len()
                    )));
                }
                let mut items = Vec::with_capacity(len);
                for (i, elem) in elems.iter().enumerate() {
                    self.path.push_index(i);
                    items.push(self.value(elem)?);
                    self.path.pop();
                }
                Ok(Value::typed_list(items, ty.clone()))
            }
            Type::Map(elem) => {
                let len = self.map_len(ty)?;
                // The length is the input's word: an entry takes at least
                // two bytes, so no more than what is left can be real.
                let mut items =
                    ValueMap::with_capacity(len.min(self.buf.len().saturating_sub(self.pos) / 2));
                for _ in 0..len {
                    let key = self.string(&Type::String)?;
                    self.path.push_key(&key);
                    let v = self.value(elem)?;
                    self.path.pop();
                    items.insert(key, v);
                }
                Ok(Value::Map(items.typed(ty.clone())))
            }
            Type::Object { attrs, .. } => {
                let len = self.map_len(ty)?;
                // Every attribute of the type, whatever the input claims.
                let mut items = ValueMap::with_capacity(attrs.len());
                for _ in 0..len {
                    let key = self.string(&Type::String)?;
                    let Some(aty) = attrs.get(&key) else {
                        return Err(self.path.error(format!("unsupported attribute {key:?}")));
                    };
                    self.path.push_key(&key);
                    let v = self.value(aty)?;
                    self.path.pop();
                    items.insert(key, v);
                }
                for (k, aty) in attrs {
                    items
                        .entry(k.clone())
                        .or_insert_with(|| Value::null_of(aty.clone()));
                }
                Ok(Value::Map(items))
            }
        }
    }

    fn marker(&mut self) -> Result<Marker, CodecError> {
        let m = self.peek()?;
        self.pos += 1;
        Ok(m)
    }

    fn unexpected(&self, ty: &Type, m: Marker) -> CodecError {
        self.path
            .error(format!("expected {ty}, found msgpack {m:?}"))
    }

    /// Skips an unknown-value extension; its refinements are not kept.
    fn unknown(&mut self) -> Result<(), CodecError> {
        let len = match self.marker()? {
            Marker::FixExt1 => 1,
            Marker::FixExt2 => 2,
            Marker::FixExt4 => 4,
            Marker::FixExt8 => 8,
            Marker::FixExt16 => 16,
            Marker::Ext8 => self.be(1)? as usize,
            Marker::Ext16 => self.be(2)? as usize,
            _ => self.be(4)? as usize,
        };
        let ext_type = self.take(1)?[0] as i8;
        if ext_type != UNKNOWN_EXT && ext_type != REFINED_UNKNOWN_EXT {
            return Err(self
                .path
                .error(format!("unsupported msgpack extension type {ext_type}")));
        }
        self.take(len)?;
        Ok(())
    }

    fn dynamic(&mut self) -> Result<Value, CodecError> {
        let len = self.array_len(&Type::Dynamic)?;
        if len != 2 {
            return Err(self.path.error(format!(
                "dynamic value must be a 2-element array, found {len} elements"
            )));
        }
        let type_json = self.bytes(&Type::Dynamic)?;
        let inner = type_from_json(type_json).map_err(|e| {
            self.path
                .error(format!("invalid type of dynamic value: {e}"))
        })?;
        self.value(&inner)
    }

    fn number(&mut self) -> Result<Number, CodecError> {
        let m = self.peek()?;
        let n = match m {
            Marker::FixPos(v) => Number::Int(i64::from(v)),
            Marker::FixNeg(v) => Number::Int(i64::from(v)),
            Marker::U8 | Marker::U16 | Marker::U32 | Marker::U64 => {
                self.pos += 1;
                let width = 1 << (m.to_u8() - Marker::U8.to_u8());
                let v = self.be(width)?;
                return Ok(Number::from(v));
            }
            Marker::I8 | Marker::I16 | Marker::I32 | Marker::I64 => {
                self.pos += 1;
                let width = 1usize << (m.to_u8() - Marker::I8.to_u8());
                let v = self.be(width)?;
                // Sign-extend the big-endian two's complement value.
                let shift = 64 - 8 * width as u32;
                return Ok(Number::Int(((v << shift) as i64) >> shift));
            }
            Marker::F32 => {
                self.pos += 1;
                let bits = self.be(4)? as u32;
                return Ok(Number::from_f64(f64::from(f32::from_bits(bits))));
            }
            Marker::F64 => {
                self.pos += 1;
                return Ok(Number::from_f64(f64::from_bits(self.be(8)?)));
            }
            _ => {
                // cty's form for numbers no msgpack number holds exactly.
                let text = self.string(&Type::Number)?;
                return Number::parse(&text)
                    .ok_or_else(|| self.path.error(format!("invalid number {text:?}")));
            }
        };
        self.pos += 1;
        Ok(n)
    }

    /// Bytes of a str or bin value (go's msgpack decodes either as a string).
    fn bytes(&mut self, ty: &Type) -> Result<&'a [u8], CodecError> {
        let len = match self.marker()? {
            Marker::FixStr(n) => usize::from(n),
            Marker::Str8 | Marker::Bin8 => self.be(1)? as usize,
            Marker::Str16 | Marker::Bin16 => self.be(2)? as usize,
            Marker::Str32 | Marker::Bin32 => self.be(4)? as usize,
            m => {
                self.pos -= 1;
                return Err(self.unexpected(ty, m));
            }
        };
        self.take(len)
    }

    fn string(&mut self, ty: &Type) -> Result<String, CodecError> {
        let bytes = self.bytes(ty)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| self.path.error("string is not valid UTF-8"))
    }

    fn array_len(&mut self, ty: &Type) -> Result<usize, CodecError> {
        match self.marker()? {
            Marker::FixArray(n) => Ok(usize::from(n)),
            Marker::Array16 => Ok(self.be(2)? as usize),
            Marker::Array32 => Ok(self.be(4)? as usize),
            m => Err(self.unexpected(ty, m)),
        }
    }

    fn map_len(&mut self, ty: &Type) -> Result<usize, CodecError> {
        match self.marker()? {
            Marker::FixMap(n) => Ok(usize::from(n)),
            Marker::Map16 => Ok(self.be(2)? as usize),
            Marker::Map32 => Ok(self.be(4)? as usize),
            m => Err(self.unexpected(ty, m)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// cty's bytes: a typed null or unknown in a typed context is `nil` or
    /// the unknown extension, as before nulls carried types; where the
    /// type is `dynamic` it is `[type, nil]` (go-cty's marshalDynamic),
    /// and it decodes with its type.
    #[test]
    fn typed_nulls_and_unknowns_encode_as_cty_does() {
        let null = Value::null_of(Type::String);
        assert_eq!(encode(&null, &Type::String).unwrap(), [0xc0]);
        assert_eq!(encode(&Value::null(), &Type::Dynamic).unwrap(), [0xc0]);
        let dynamic = encode(&null, &Type::Dynamic).unwrap();
        assert_eq!(dynamic, b"\x92\xc4\x08\"string\"\xc0");
        let back = decode(&dynamic, &Type::Dynamic).unwrap();
        assert!(back.is_null());
        assert_eq!(back.ty(), Type::String);

        let unknown = Value::unknown_of(Type::list(Type::Number));
        let ty = Type::list(Type::Number);
        assert_eq!(encode(&unknown, &ty).unwrap(), [0xd4, 0, 0]);
        let dynamic = encode(&unknown, &Type::Dynamic).unwrap();
        assert_eq!(&dynamic[..3], b"\x92\xc4\x11");
        let back = decode(&dynamic, &Type::Dynamic).unwrap();
        assert!(back.is_unknown());
        assert_eq!(back.ty(), ty);
        // A schema's null attribute decodes as a null of its type.
        let obj = Type::object([("a", Type::String), ("b", Type::set(Type::Bool))]);
        let v = decode(
            &encode(&Value::object([("a", Value::null())]), &obj).unwrap(),
            &obj,
        );
        let v = v.unwrap();
        assert_eq!(v.get_attr("a").ty(), Type::String);
        assert_eq!(v.get_attr("b").ty(), Type::set(Type::Bool));
    }

    #[test]
    fn unknown_is_extension_zero() {
        assert_eq!(
            encode(&Value::unknown(), &Type::String).unwrap(),
            vec![0xd4, 0x00, 0x00]
        );
        assert_eq!(
            decode(&[0xd4, 0x00, 0x00], &Type::list(Type::Number)).unwrap(),
            Value::unknown()
        );
    }

    #[test]
    fn refined_unknown_decodes_as_unknown() {
        // ext8, 3 bytes of payload, type 12: a refinement map {1: true} ("not null").
        let bytes = [0xc7, 0x03, 0x0c, 0x81, 0x01, 0xc3];
        assert_eq!(decode(&bytes, &Type::String).unwrap(), Value::unknown());
        let obj = Type::object([("id", Type::String)]);
        let mut wrapped = vec![0x81, 0xa2, b'i', b'd'];
        wrapped.extend_from_slice(&bytes);
        assert_eq!(
            decode(&wrapped, &obj).unwrap(),
            Value::object([("id", Value::unknown())])
        );
        assert!(decode(&[0xd4, 0x05, 0x00], &Type::String).is_err());
    }

    #[test]
    fn dynamic_wraps_type_json_and_value() {
        let bytes = encode(&Value::from("hi"), &Type::Dynamic).unwrap();
        let mut expected = vec![0x92, 0xc4, 0x08];
        expected.extend_from_slice(b"\"string\"");
        expected.extend_from_slice(&[0xa2, b'h', b'i']);
        assert_eq!(bytes, expected);
        assert_eq!(decode(&bytes, &Type::Dynamic).unwrap(), Value::from("hi"));
        // Nulls and unknowns are not wrapped.
        assert_eq!(encode(&Value::null(), &Type::Dynamic).unwrap(), vec![0xc0]);
        assert_eq!(
            encode(&Value::unknown(), &Type::Dynamic).unwrap(),
            vec![0xd4, 0, 0]
        );
        // go's msgpack sends the type as str in some versions; accept both.
        let mut as_str = vec![0x92, 0xa8];
        as_str.extend_from_slice(b"\"number\"");
        as_str.push(0x07);
        assert_eq!(decode(&as_str, &Type::Dynamic).unwrap(), Value::int(7));
    }

    #[test]
    fn objects_encode_every_attribute_in_name_order() {
        let ty = Type::object([("b", Type::Bool), ("a", Type::Number)]);
        let bytes = encode(&Value::object([("b", Value::from(true))]), &ty).unwrap();
        assert_eq!(bytes, vec![0x82, 0xa1, b'a', 0xc0, 0xa1, b'b', 0xc3]);
        let extra = Value::object([("c", Value::from(true))]);
        assert!(
            encode(&extra, &ty)
                .unwrap_err()
                .to_string()
                .contains("unsupported attribute")
        );
    }

    #[test]
    fn numbers_use_ints_when_exact_and_accept_decimal_strings() {
        assert_eq!(
            encode(&Value::Number(Number::Float(3.0)), &Type::Number).unwrap(),
            vec![0x03]
        );
        assert_eq!(encode(&Value::int(-1), &Type::Number).unwrap(), vec![0xff]);
        assert_eq!(
            decode(&[0xd1, 0xfe, 0x0c], &Type::Number).unwrap(),
            Value::int(-500)
        );
        assert_eq!(
            decode(&[0xcd, 0x01, 0xf4], &Type::Number).unwrap(),
            Value::int(500)
        );
        let big = [&[0xa4][..], b"2.25"].concat();
        assert_eq!(
            decode(&big, &Type::Number).unwrap(),
            Value::Number(Number::Float(2.25))
        );
    }

    fn num(text: &str) -> Value {
        Value::Number(Number::parse(text).unwrap())
    }

    /// msgpack str header + bytes, as go's msgpack writes short strings.
    fn msgpack_str(text: &str) -> Vec<u8> {
        let mut out = Vec::new();
        enc::write_str(&mut out, text).unwrap();
        out
    }

    #[test]
    fn numbers_beyond_i64_and_f64_travel_as_decimal_text_like_cty() {
        for text in [
            "12345678901234567890123",
            "-12345678901234567890123",
            "0.1000000000000000000001",
            "18446744073709551615",
            "-9223372036854775809",
        ] {
            let bytes = encode(&num(text), &Type::Number).unwrap();
            assert_eq!(bytes, msgpack_str(text), "{text}");
            assert_eq!(decode(&bytes, &Type::Number).unwrap(), num(text));
        }
        // What an f64 holds exactly goes as a float, integers in i64 as ints.
        assert_eq!(
            encode(&num("0.1"), &Type::Number).unwrap(),
            [&[0xcb][..], &0.1f64.to_be_bytes()].concat()
        );
        assert_eq!(
            encode(&num("1e20"), &Type::Number).unwrap(),
            [&[0xcb][..], &1e20f64.to_be_bytes()].concat()
        );
        assert_eq!(
            encode(&num("9223372036854775807"), &Type::Number).unwrap(),
            [&[0xcf][..], &i64::MAX.to_be_bytes()].concat()
        );
    }

    #[test]
    fn decoding_takes_every_number_form_cty_writes() {
        // uint64 above i64::MAX.
        let u64_max = [&[0xcf][..], &u64::MAX.to_be_bytes()].concat();
        assert_eq!(
            decode(&u64_max, &Type::Number).unwrap(),
            num("18446744073709551615")
        );
        // float32 and float64.
        let f32 = [&[0xca][..], &1.5f32.to_be_bytes()].concat();
        assert_eq!(decode(&f32, &Type::Number).unwrap(), num("1.5"));
        let f64 = [&[0xcb][..], &0.1f64.to_be_bytes()].concat();
        assert_eq!(decode(&f64, &Type::Number).unwrap(), num("0.1"));
        // cty's string form, in any decimal notation big.ParseFloat takes.
        let text = msgpack_str("1.5e25");
        assert_eq!(
            decode(&text, &Type::Number).unwrap(),
            num("15000000000000000000000000")
        );
        assert!(decode(&msgpack_str("12abc"), &Type::Number).is_err());
        // A big number inside a dynamic value keeps its digits too.
        let v = Value::object([("n", num("-12345678901234567890123.45"))]);
        let bytes = encode(&v, &Type::Dynamic).unwrap();
        assert_eq!(decode(&bytes, &Type::Dynamic).unwrap(), v);
    }

    #[test]
    fn sets_are_sorted_and_deduplicated_but_unknowns_are_kept() {
        let ty = Type::set(Type::String);
        let v = Value::tuple(vec![
            "b".into(),
            "a".into(),
            "b".into(),
            Value::unknown(),
            Value::unknown(),
        ]);
        let bytes = encode(&v, &ty).unwrap();
        assert_eq!(
            bytes,
            vec![0x94, 0xa1, b'a', 0xa1, b'b', 0xd4, 0, 0, 0xd4, 0, 0]
        );
    }

    #[test]
    fn truncated_and_mismatched_input_fails() {
        assert!(decode(&[0x92, 0x01], &Type::list(Type::Number)).is_err());
        assert!(decode(&[0x01, 0x02], &Type::Number).is_err());
        assert!(decode(&[0xa1, b'x'], &Type::Bool).is_err());
    }

    /// A map or object that claims four billion entries in a few bytes is
    /// an error, not an attempt to allocate room for them.
    #[test]
    fn a_claimed_length_beyond_the_input_is_not_allocated() {
        let huge = [0xdf, 0xff, 0xff, 0xff, 0xff, 0xa1, b'a', 0x01];
        assert!(decode(&huge, &Type::map(Type::Number)).is_err());
        let object = Type::object([("a", Type::Number)]);
        assert!(decode(&huge, &object).is_err());
    }
}
