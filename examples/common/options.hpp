// A tiny command-line reader for the examples: `--name value` pairs and
// `--flag`s, with defaults; an unknown option is an error.
#pragma once

#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>

namespace examples {

class Options {
 public:
  Options(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
      std::string name = argv[i];
      if (name.rfind("--", 0) != 0) throw std::invalid_argument("expected an option, got '" + name + "'");
      name = name.substr(2);
      const bool has_value = i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0;
      given_[name] = has_value ? argv[++i] : "";
    }
  }
  double number(const std::string& name, double fallback) { return has(name) ? std::stod(take(name)) : fallback; }
  long integer(const std::string& name, long fallback) { return has(name) ? std::stol(take(name)) : fallback; }
  std::string text(const std::string& name, const std::string& fallback) { return has(name) ? take(name) : fallback; }
  bool flag(const std::string& name) {
    if (!has(name)) return false;
    take(name);
    return true;
  }
  // Call after reading every option: throws naming one nobody read.
  void no_others() const {
    if (!given_.empty()) throw std::invalid_argument("unknown option --" + given_.begin()->first);
  }

 private:
  bool has(const std::string& name) const { return given_.count(name) > 0; }
  std::string take(const std::string& name) {
    std::string value = given_.at(name);
    given_.erase(name);
    return value;
  }
  std::map<std::string, std::string> given_;
};

}  // namespace examples
