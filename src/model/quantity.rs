//! Exact Kubernetes quantities in integer milli-units.
//!
//! Kubernetes quantities ("500m", "1.5Gi", "2e3", "8") are decimal or binary scaled
//! numbers. Quota arithmetic must be exact, so we keep them as an `i128` count of
//! milli-units: memory in the petabytes still fits, and no float ever touches a quota.

use std::fmt;
use std::ops::{Add, AddAssign, Mul, Neg, Sub, SubAssign};

/// A Kubernetes resource quantity in milli-units (1 GPU = 1000).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Quantity(pub i128);

/// Why a quantity string could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid quantity {input:?}: {why}")]
pub struct QuantityError {
    pub input: String,
    pub why: &'static str,
}

impl Quantity {
    pub const ZERO: Quantity = Quantity(0);

    /// A whole number of units (e.g. 8 GPUs).
    pub const fn from_units(units: i64) -> Self {
        Quantity(units as i128 * 1000)
    }

    pub const fn from_milli(milli: i128) -> Self {
        Quantity(milli)
    }

    pub const fn milli(self) -> i128 {
        self.0
    }

    pub fn is_zero(self) -> bool {
        self.0 == 0
    }

    /// Whole units, rounded up (a pod asking for 500m CPU needs one core's slot).
    pub fn units_ceil(self) -> i128 {
        if self.0 >= 0 {
            (self.0 + 999) / 1000
        } else {
            self.0 / 1000
        }
    }

    pub fn max(self, other: Self) -> Self {
        if self >= other { self } else { other }
    }

    pub fn min(self, other: Self) -> Self {
        if self <= other { self } else { other }
    }

    /// `self - other`, floored at zero.
    pub fn saturating_sub_zero(self, other: Self) -> Self {
        Quantity((self.0 - other.0).max(0))
    }

    /// Parses a Kubernetes quantity string exactly.
    ///
    /// Accepts an optional sign, digits with an optional fraction, and one suffix:
    /// binary (Ki Mi Gi Ti Pi Ei), decimal (n u m "" k M G T P E) or an exponent (e3, E-2).
    /// Precision below one milli-unit is rounded up, as Kubernetes rounds requests up.
    pub fn parse(input: &str) -> Result<Self, QuantityError> {
        let err = |why| QuantityError {
            input: input.to_string(),
            why,
        };
        let s = input.trim();
        if s.is_empty() {
            return Err(err("empty"));
        }
        let (negative, s) = match s.as_bytes()[0] {
            b'-' => (true, &s[1..]),
            b'+' => (false, &s[1..]),
            _ => (false, s),
        };
        let num_end = s
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(s.len());
        let (number, suffix) = s.split_at(num_end);
        if number.is_empty() || number == "." {
            return Err(err("no digits"));
        }
        let (int_part, frac_part) = match number.split_once('.') {
            Some((i, f)) => {
                if f.contains('.') {
                    return Err(err("more than one decimal point"));
                }
                (i, f)
            }
            None => (number, ""),
        };
        if int_part.len() + frac_part.len() > 30 {
            return Err(err("too many digits"));
        }
        // mantissa = digits as an integer, scaled down by 10^frac_len.
        let digits: String = format!("{int_part}{frac_part}");
        let mantissa: i128 = if digits.is_empty() {
            0
        } else {
            digits.parse().map_err(|_| err("bad digits"))?
        };
        let frac_len = frac_part.len() as i32;

        // value = mantissa * 10^(dec_exp - frac_len) * 2^bin_exp, then * 1000 for milli.
        let (dec_exp, bin_exp): (i32, u32) = match suffix {
            "" => (0, 0),
            "n" => (-9, 0),
            "u" => (-6, 0),
            "m" => (-3, 0),
            "k" => (3, 0),
            "M" => (6, 0),
            "G" => (9, 0),
            "T" => (12, 0),
            "P" => (15, 0),
            "E" => (18, 0),
            "Ki" => (0, 10),
            "Mi" => (0, 20),
            "Gi" => (0, 30),
            "Ti" => (0, 40),
            "Pi" => (0, 50),
            "Ei" => (0, 60),
            other if other.starts_with(['e', 'E']) => {
                let exp: i32 = other[1..].parse().map_err(|_| err("bad exponent"))?;
                if !(-30..=30).contains(&exp) {
                    return Err(err("exponent out of range"));
                }
                (exp, 0)
            }
            _ => return Err(err("unknown suffix")),
        };
        let overflow = || err("too large");
        let mut value = mantissa
            .checked_mul(1i128 << bin_exp)
            .ok_or_else(overflow)?;
        let exp10 = dec_exp - frac_len + 3; // +3 for milli-units
        if exp10 >= 0 {
            value = value
                .checked_mul(10i128.checked_pow(exp10 as u32).ok_or_else(overflow)?)
                .ok_or_else(overflow)?;
        } else {
            let div = 10i128
                .checked_pow((-exp10) as u32)
                .ok_or_else(|| err("too small"))?;
            // round up (towards +inf in magnitude) like Kubernetes' ScaledValue rounding
            value = value.checked_add(div - 1).ok_or_else(overflow)? / div;
        }
        if value > i128::from(i64::MAX) * 1_000_000 {
            return Err(overflow());
        }
        Ok(Quantity(if negative { -value } else { value }))
    }
}

impl std::str::FromStr for Quantity {
    type Err = QuantityError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Quantity::parse(s)
    }
}

/// Canonical Kubernetes-like form: "32", "500m", "1.5" never appears (it is "1500m"),
/// and exact binary multiples of at least 1Ki print with their suffix ("64Gi").
impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.0;
        if m % 1000 != 0 {
            return write!(f, "{m}m");
        }
        let units = m / 1000;
        // Only memory-sized values get binary suffixes: 2048 GPUs stay "2048".
        if units != 0 && units.abs() >= 1 << 20 {
            for (suffix, shift) in [
                ("Ei", 60),
                ("Pi", 50),
                ("Ti", 40),
                ("Gi", 30),
                ("Mi", 20),
                ("Ki", 10),
            ] {
                let base = 1i128 << shift;
                if units % base == 0 {
                    return write!(f, "{}{suffix}", units / base);
                }
            }
        }
        write!(f, "{units}")
    }
}

impl Add for Quantity {
    type Output = Quantity;
    fn add(self, rhs: Self) -> Self {
        Quantity(self.0 + rhs.0)
    }
}
impl Sub for Quantity {
    type Output = Quantity;
    fn sub(self, rhs: Self) -> Self {
        Quantity(self.0 - rhs.0)
    }
}
impl AddAssign for Quantity {
    fn add_assign(&mut self, rhs: Self) {
        self.0 += rhs.0;
    }
}
impl SubAssign for Quantity {
    fn sub_assign(&mut self, rhs: Self) {
        self.0 -= rhs.0;
    }
}
impl Neg for Quantity {
    type Output = Quantity;
    fn neg(self) -> Self {
        Quantity(-self.0)
    }
}
/// Scaling by a pod count.
impl Mul<i64> for Quantity {
    type Output = Quantity;
    fn mul(self, rhs: i64) -> Self {
        Quantity(self.0 * i128::from(rhs))
    }
}
impl std::iter::Sum for Quantity {
    fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
        iter.fold(Quantity::ZERO, |a, b| a + b)
    }
}

impl serde::Serialize for Quantity {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> i128 {
        Quantity::parse(s).unwrap().milli()
    }

    #[test]
    fn parses_kubernetes_forms_exactly() {
        assert_eq!(q("8"), 8000);
        assert_eq!(q("500m"), 500);
        assert_eq!(q("1.5Gi"), 1_610_612_736_000);
        assert_eq!(q("2e3"), 2_000_000);
        assert_eq!(q("0.5"), 500);
        assert_eq!(q("1k"), 1_000_000);
        assert_eq!(q("100Mi"), 104_857_600_000);
        assert_eq!(q("1n"), 1); // rounds up to one milli
        assert_eq!(q("-2"), -2000);
        assert_eq!(q("1E-3"), 1);
        assert_eq!(q("+3"), 3000);
    }

    #[test]
    fn rejects_garbage_with_reason() {
        for bad in ["", "abc", "1.2.3", "5x", "1e", "Gi", "."] {
            assert!(Quantity::parse(bad).is_err(), "{bad} should fail");
        }
    }

    #[test]
    fn displays_canonically() {
        assert_eq!(Quantity::parse("32").unwrap().to_string(), "32");
        assert_eq!(Quantity::parse("0.5").unwrap().to_string(), "500m");
        assert_eq!(Quantity::parse("64Gi").unwrap().to_string(), "64Gi");
        assert_eq!(Quantity::parse("1000").unwrap().to_string(), "1000");
        assert_eq!(Quantity::parse("2048").unwrap().to_string(), "2048");
        assert_eq!(Quantity::parse("1Gi").unwrap().to_string(), "1Gi");
    }
}
