// cli/markup.h: escaping text for the HTML and XML that lockstep writes.
#pragma once

#include <string>
#include <string_view>

namespace lockstep::cli {

// Escapes & < > " ' and drops control characters XML 1.0 does not allow (but \n and \t).
inline std::string escape_markup(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') continue;
        out += c;
    }
  }
  return out;
}

}  // namespace lockstep::cli
