#include "python_lines.hpp"

#include <cstddef>
#include <cstring>
#include <dlfcn.h>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

#include <cunumpy/impl/api_scope.hpp>

namespace cunumpy::plugin {
namespace {

// CPython's C API, as far as the plugin calls it: opaque pointers only, so
// that no Python header is needed and every version from 3.9 works.
using Object = void;
struct Api {
  int (*is_initialized)() = nullptr;        // Py_IsInitialized
  int (*gil_held)() = nullptr;              // PyGILState_Check
  Object* (*current_frame)() = nullptr;     // PyEval_GetFrame
  Object* (*frame_code)(Object*) = nullptr; // PyFrame_GetCode
  Object* (*frame_back)(Object*) = nullptr; // PyFrame_GetBack
  int (*frame_line)(Object*) = nullptr;     // PyFrame_GetLineNumber
  int (*frame_lasti)(Object*) = nullptr;    // PyFrame_GetLasti (3.11)
  Object* (*attribute)(Object*,
                       const char*) = nullptr; // PyObject_GetAttrString
  const char* (*utf8)(Object*,
                      std::ptrdiff_t*) = nullptr; // PyUnicode_AsUTF8AndSize
  void (*incref)(Object*) = nullptr;              // Py_IncRef
  void (*decref)(Object*) = nullptr;              // Py_DecRef
  void (*clear_error)() = nullptr;                // PyErr_Clear
  Object* (*sys_object)(const char*) = nullptr;   // PySys_GetObject
  Object* (*dict_item)(Object*, const char*) = nullptr; // PyDict_GetItemString
};
Api api;

/// A code object's file and function, and whether it is cunumpy's own.
/// Looked up once per code object, which the cache keeps alive (its
/// address is never reused while cached).
struct Code {
  std::string file;
  std::string function;
  bool own = false;
};

/// Lines by code object and instruction (PyFrame_GetLasti, CPython 3.11
/// on): PyFrame_GetLineNumber decodes the code's line table each time.
struct Instruction {
  Object* code;
  int lasti;
  bool operator==(const Instruction& other) const noexcept {
    return code == other.code && lasti == other.lasti;
  }
};
struct InstructionHash {
  std::size_t operator()(const Instruction& key) const noexcept {
    return std::hash<const void*>()(key.code) ^
           (static_cast<std::size_t>(key.lasti) * 0x9e3779b97f4a7c15ull);
  }
};

/// Used only with the GIL held: the GIL serializes it.
std::unordered_map<Object*, Code>& codes() {
  static auto* cache = new std::unordered_map<Object*, Code>();
  return *cache;
}
constexpr std::size_t max_codes = 1u << 16;

std::string text_attribute(Object* object, const char* name) {
  std::string text;
  if (Object* value = api.attribute(object, name)) {
    std::ptrdiff_t size = 0;
    if (const char* data = api.utf8(value, &size))
      text.assign(data, static_cast<std::size_t>(size));
    api.decref(value);
  }
  api.clear_error();
  return text;
}

/// The folder of cunumpy's Python package as imported ("/…/cunumpy/"),
/// from its module's __file__; empty while it is not imported (then no
/// frame is its). By identity: a user's folder named cunumpy is not it.
std::string own_package() {
  static std::string folder;
  if (!folder.empty())
    return folder;
  Object* modules = api.sys_object("modules"); // borrowed
  Object* module =
      modules != nullptr ? api.dict_item(modules, "cunumpy") : nullptr;
  api.clear_error();
  if (module == nullptr)
    return {};
  const std::string file = text_attribute(module, "__file__");
  const auto slash = file.rfind('/');
  if (slash != std::string::npos)
    folder = file.substr(0, slash + 1);
  return folder;
}

/// A frame of cunumpy's own Python package is never the user's line.
bool own_file(std::string_view file) {
  const std::string folder = own_package();
  return !folder.empty() && file.substr(0, folder.size()) == folder;
}

const Code* describe(Object* code) {
  auto& cache = codes();
  if (auto found = cache.find(code); found != cache.end())
    return &found->second;
  Code entry;
  entry.file = text_attribute(code, "co_filename");
  entry.function = text_attribute(code, "co_name");
  entry.own = entry.file.empty() || own_file(entry.file);
  if (cache.size() >= max_codes)
    return nullptr; // a program making code objects without end
  api.incref(code);
  return &cache.emplace(code, std::move(entry)).first->second;
}

int line_of(Object* frame, Object* code) {
  if (api.frame_lasti == nullptr)
    return api.frame_line(frame);
  static auto* lines =
      new std::unordered_map<Instruction, int, InstructionHash>();
  const Instruction key{code, api.frame_lasti(frame)};
  if (auto found = lines->find(key); found != lines->end())
    return found->second;
  const int line = api.frame_line(frame);
  if (lines->size() < max_codes * 4) // codes in the cache stay alive
    lines->emplace(key, line);
  return line;
}

/// The recorder's site provider: on the thread of the event, without the
/// recorder's lock. Reads frames only when this thread holds the GIL, and
/// never takes it (Kokkos may run with the GIL released).
bool python_line(std::string& file, int& line, std::string& function) {
  if (api.is_initialized() == 0 || api.gil_held() == 0)
    return false;
  Object* frame = api.current_frame(); // borrowed
  if (frame == nullptr)
    return false;
  api.incref(frame);
  while (frame != nullptr) {
    Object* code = api.frame_code(frame);
    const Code* known = code != nullptr ? describe(code) : nullptr;
    if (known != nullptr && !known->own) {
      file = known->file;
      function = known->function;
      line = line_of(frame, code); // the cache holds the code alive
      api.decref(code);
      api.decref(frame);
      return true;
    }
    if (code != nullptr)
      api.decref(code);
    Object* back = api.frame_back(frame);
    api.decref(frame);
    frame = back;
  }
  return false;
}

template <class Function> bool find(const char* name, Function& function) {
  function = reinterpret_cast<Function>(::dlsym(RTLD_DEFAULT, name));
  return function != nullptr;
}

} // namespace

bool install_python_lines() {
  // PyFrame_GetCode and PyFrame_GetBack are CPython 3.9's: an older
  // interpreter, or another Python, has not all of these.
  const bool found = find("Py_IsInitialized", api.is_initialized) &&
                     find("PyGILState_Check", api.gil_held) &&
                     find("PyEval_GetFrame", api.current_frame) &&
                     find("PyFrame_GetCode", api.frame_code) &&
                     find("PyFrame_GetBack", api.frame_back) &&
                     find("PyFrame_GetLineNumber", api.frame_line) &&
                     find("PyObject_GetAttrString", api.attribute) &&
                     find("PyUnicode_AsUTF8AndSize", api.utf8) &&
                     find("Py_IncRef", api.incref) &&
                     find("Py_DecRef", api.decref) &&
                     find("PyErr_Clear", api.clear_error) &&
                     find("PySys_GetObject", api.sys_object) &&
                     find("PyDict_GetItemString", api.dict_item);
  find("PyFrame_GetLasti", api.frame_lasti); // optional: CPython 3.11 on
  if (!found || Impl::site_provider() != nullptr)
    return false; // not CPython, or cunumpy's module provides lines itself
  Impl::set_site_provider(&python_line);
  return true;
}

} // namespace cunumpy::plugin
