// Just enough JSON writing for bench records: each helper returns the text of
// one value, and objects are built from (key, already-encoded value) pairs.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace dkb::json {

inline std::string str(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// Finite numbers with 6 significant digits; NaN/Inf (never valid JSON) become null.
inline std::string num(double x) {
  if (!std::isfinite(x)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

inline std::string integer(int64_t x) { return std::to_string(x); }
inline std::string boolean(bool b) { return b ? "true" : "false"; }
inline std::string null() { return "null"; }

using members = std::vector<std::pair<std::string, std::string>>;

inline std::string object(const members& m) {
  std::string out = "{";
  for (std::size_t i = 0; i < m.size(); ++i)
    out += (i ? ", " : "") + str(m[i].first) + ": " + m[i].second;
  return out + "}";
}

inline std::string array(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out + "]";
}

inline std::string numbers(const std::vector<double>& xs) {
  std::vector<std::string> items;
  items.reserve(xs.size());
  for (double x : xs) items.push_back(num(x));
  return array(items);
}

}  // namespace dkb::json
