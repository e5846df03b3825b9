# Finds what cunumpy needs from the system. Everything missing is collected
# into CUNUMPY_MISSING_DEPENDENCIES, one message naming each piece and the
# Debian package that provides it, which the top level raises as its one
# error (instead of CMake's error for the first package not found, with its
# search paths).

include_guard(GLOBAL)
include(cunumpyKokkos)

# Adds "WHAT: HOW" to the missing list and PACKAGE to the Debian packages.
macro(_cunumpy_missing what how package)
  string(APPEND CUNUMPY_MISSING_DEPENDENCIES "\n  - ${what}: ${how}")
  if(NOT "${package}" STREQUAL "")
    list(APPEND _cunumpy_missing_packages ${package})
  endif()
endmacro()

# The interpreter the Python module is built for: the one found first on
# PATH (a virtual environment first), unless Python_EXECUTABLE says
# otherwise; and the pybind11 installed for it (pip), else the system's.
macro(_cunumpy_find_python)
  if(NOT DEFINED Python_EXECUTABLE)
    set(Python_FIND_UNVERSIONED_NAMES FIRST)
    set(Python_FIND_VIRTUALENV FIRST)
  endif()
  find_package(Python 3.8 QUIET COMPONENTS Interpreter Development.Module)
  if(NOT Python_Interpreter_FOUND)
    _cunumpy_missing("Python 3.8 or newer" "Debian package python3" python3)
  elseif(NOT Python_Development.Module_FOUND)
    _cunumpy_missing(
      "the Python headers of ${Python_EXECUTABLE}"
      "Debian package python3-dev (for Debian's python3)" python3-dev)
  endif()
  set(_cunumpy_pybind11_hint "")
  if(Python_Interpreter_FOUND AND NOT pybind11_DIR)
    execute_process(
      COMMAND "${Python_EXECUTABLE}" -m pybind11 --cmakedir
      OUTPUT_VARIABLE _cunumpy_pybind11_hint
      OUTPUT_STRIP_TRAILING_WHITESPACE
      RESULT_VARIABLE _cunumpy_pybind11_result
      ERROR_QUIET)
    if(NOT _cunumpy_pybind11_result EQUAL 0)
      set(_cunumpy_pybind11_hint "")
    endif()
  endif()
  find_package(pybind11 2.10 CONFIG QUIET HINTS ${_cunumpy_pybind11_hint})
  if(NOT pybind11_FOUND)
    _cunumpy_missing(
      "pybind11 2.10 or newer"
      "Debian package pybind11-dev, or `pip install pybind11` for this interpreter"
      pybind11-dev)
  endif()
endmacro()

# libdw, libelf, libzstd and zlib through pkg-config: the target
# PkgConfig::CUNUMPY_DW when found (also for the installed package's
# consumers).
macro(cunumpy_find_libdw)
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND AND NOT TARGET PkgConfig::CUNUMPY_DW)
    pkg_check_modules(CUNUMPY_DW QUIET IMPORTED_TARGET GLOBAL
                      libdw libelf libzstd zlib)
  endif()
endmacro()

# Finds every dependency of the parts being built (CUNUMPY_BUILD_*), QUIET;
# sets CUNUMPY_MISSING_DEPENDENCIES to the error text when any is missing.
macro(cunumpy_find_dependencies)
  set(CUNUMPY_MISSING_DEPENDENCIES "")
  set(_cunumpy_missing_packages)

  if(CUNUMPY_WITH_KOKKOS)
    cunumpy_find_kokkos(QUIET)
    if(NOT Kokkos_FOUND)
      _cunumpy_missing(
        "Kokkos 3.4 or newer"
        "Debian package libtrilinos-kokkos-dev, or a Kokkos installed elsewhere with -DKokkos_ROOT=<prefix> (pip: -Ccmake.define.Kokkos_ROOT=<prefix>)"
        libtrilinos-kokkos-dev)
    endif()
  endif()
  find_package(tomlplusplus QUIET)
  if(NOT tomlplusplus_FOUND)
    _cunumpy_missing("toml++" "Debian package libtomlplusplus-dev"
                     libtomlplusplus-dev)
  endif()
  find_package(nlohmann_json 3 QUIET)
  if(NOT nlohmann_json_FOUND)
    _cunumpy_missing("nlohmann-json 3" "Debian package nlohmann-json3-dev"
                     nlohmann-json3-dev)
  endif()
  # xxHash hashes the host side of copies for the advice on redundant
  # copies (compiled in from its header: nothing to link or install).
  # -DCUNUMPY_XXHASH_INCLUDE_DIR=<dir> names the directory of another one.
  find_path(CUNUMPY_XXHASH_INCLUDE_DIR xxhash.h)
  set(_cunumpy_xxhash_version "")
  if(CUNUMPY_XXHASH_INCLUDE_DIR AND EXISTS "${CUNUMPY_XXHASH_INCLUDE_DIR}/xxhash.h")
    file(STRINGS ${CUNUMPY_XXHASH_INCLUDE_DIR}/xxhash.h _cunumpy_xxhash_lines
         REGEX "^#[ \t]*define XXH_VERSION_(MAJOR|MINOR)[ \t]+[0-9]+")
    string(REGEX REPLACE ".*MAJOR[ \t]+([0-9]+).*MINOR[ \t]+([0-9]+).*"
           "\\1.\\2" _cunumpy_xxhash_version "${_cunumpy_xxhash_lines}")
  endif()
  if(NOT CUNUMPY_XXHASH_INCLUDE_DIR OR
     _cunumpy_xxhash_version VERSION_LESS 0.8)
    _cunumpy_missing("xxHash 0.8 or newer (XXH3, for the redundant-copy advice)"
                     "Debian package libxxhash-dev" libxxhash-dev)
  endif()
  # elfutils' libdw reads the debug information call sites are named from
  # (compressed, in separate debug files, split), with libzstd for the
  # zstd-compressed sections its libelf reads from elfutils 0.189 only.
  cunumpy_find_libdw()
  if(NOT TARGET PkgConfig::CUNUMPY_DW)
    _cunumpy_missing("elfutils' libdw and libzstd (call sites)"
                     "Debian packages libdw-dev libzstd-dev"
                     "libdw-dev;libzstd-dev")
  endif()
  find_package(Threads REQUIRED)
  if(CUNUMPY_BUILD_PYTHON)
    _cunumpy_find_python()
  endif()
  if(CUNUMPY_BUILD_TESTS AND CUNUMPY_WITH_KOKKOS)
    find_package(GTest QUIET)
    if(NOT GTest_FOUND)
      _cunumpy_missing("GoogleTest (the tests)"
                       "Debian package libgtest-dev, or -DCUNUMPY_BUILD_TESTS=OFF"
                       libgtest-dev)
    endif()
  endif()
  if(CUNUMPY_BUILD_BENCHMARKS)
    find_package(benchmark QUIET)
    if(NOT benchmark_FOUND)
      _cunumpy_missing(
        "Google Benchmark (the benchmarks)"
        "Debian package libbenchmark-dev, or -DCUNUMPY_BUILD_BENCHMARKS=OFF"
        libbenchmark-dev)
    endif()
  endif()

  if(NOT CUNUMPY_MISSING_DEPENDENCIES STREQUAL "")
    list(JOIN _cunumpy_missing_packages " " _cunumpy_missing_packages)
    set(CUNUMPY_MISSING_DEPENDENCIES
        "cunumpy cannot be built, missing:${CUNUMPY_MISSING_DEPENDENCIES}\n"
        "On Debian 12, as root:\n  apt-get install ${_cunumpy_missing_packages}\n"
        "(or scripts/setup, which installs everything cunumpy uses).")
    string(JOIN "" CUNUMPY_MISSING_DEPENDENCIES ${CUNUMPY_MISSING_DEPENDENCIES})
  endif()
endmacro()
