# Finds Kokkos (and optionally Kokkos Kernels) and repairs the imported
# targets of Debian's Trilinos packages.
#
# Debian's libtrilinos-kokkos-dev generates `Kokkos::kokkos` with the include
# directory `/usr/lib/include`, which does not exist; the correct directory is
# in `Kokkos_INCLUDE_DIRS`. A standalone Kokkos 4.x/5.x (given with
# -DKokkos_ROOT=...) has a correct target and is left alone. This file is
# installed next to cunumpyConfig.cmake so consumers get the same repair.

include_guard(GLOBAL)

# Replaces the include directories of `target` by `include_dirs` when one of
# its current include directories does not exist.
function(cunumpy_repair_include_dirs target include_dirs)
  if(NOT TARGET ${target} OR NOT include_dirs)
    return()
  endif()
  get_target_property(_dirs ${target} INTERFACE_INCLUDE_DIRECTORIES)
  set(_broken FALSE)
  if(NOT _dirs)
    set(_broken TRUE)
  endif()
  foreach(_dir IN LISTS _dirs)
    # Generator expressions are resolved later; only plain paths are checked.
    if(NOT _dir MATCHES "^\\$<" AND NOT EXISTS "${_dir}")
      set(_broken TRUE)
    endif()
  endforeach()
  if(_broken)
    set(_fixed)
    foreach(_dir IN LISTS include_dirs)
      get_filename_component(_real "${_dir}" REALPATH)
      list(APPEND _fixed "${_real}")
    endforeach()
    set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES
                                               "${_fixed}")
    message(STATUS "cunumpy: repaired ${target} include directories: ${_fixed}")
  endif()
endfunction()

# Makes a found `Kokkos::kokkos` usable, whoever found it.
macro(cunumpy_repair_kokkos)
  if(TARGET Kokkos::kokkos)
    cunumpy_repair_include_dirs(Kokkos::kokkos "${Kokkos_INCLUDE_DIRS}")
    # Trilinos' package adds "-DKOKKOS_DEPENDENCE" as a link item; harmless
    # for GCC but rejected by some linkers, so it is dropped.
    get_target_property(_cunumpy_kokkos_links Kokkos::kokkos
                        INTERFACE_LINK_LIBRARIES)
    if(_cunumpy_kokkos_links MATCHES "-DKOKKOS_DEPENDENCE")
      list(REMOVE_ITEM _cunumpy_kokkos_links "-DKOKKOS_DEPENDENCE")
      set_target_properties(Kokkos::kokkos PROPERTIES INTERFACE_LINK_LIBRARIES
                                                      "${_cunumpy_kokkos_links}")
    endif()
  endif()
endmacro()

# Finds Kokkos and makes `Kokkos::kokkos` usable. Extra arguments are passed to
# find_package (e.g. REQUIRED, QUIET).
macro(cunumpy_find_kokkos)
  find_package(Kokkos ${ARGN})
  if(Kokkos_FOUND)
    cunumpy_repair_kokkos()
  endif()
endmacro()

# Finds Kokkos Kernels and provides `Kokkos::kokkoskernels` whatever the
# packaging (standalone Kokkos Kernels exports it, Trilinos exports
# `trilinos_kokkoskernels` without include directories).
macro(cunumpy_find_kokkos_kernels)
  find_package(KokkosKernels ${ARGN})
  if(KokkosKernels_FOUND AND NOT TARGET Kokkos::kokkoskernels)
    if(TARGET trilinos_kokkoskernels)
      add_library(Kokkos::kokkoskernels INTERFACE IMPORTED)
      set_target_properties(
        Kokkos::kokkoskernels PROPERTIES INTERFACE_LINK_LIBRARIES
                                         "trilinos_kokkoskernels;Kokkos::kokkos")
      set(_cunumpy_kk_inc)
      foreach(_dir IN LISTS KokkosKernels_INCLUDE_DIRS)
        get_filename_component(_real "${_dir}" REALPATH)
        list(APPEND _cunumpy_kk_inc "${_real}")
      endforeach()
      set_target_properties(Kokkos::kokkoskernels
                            PROPERTIES INTERFACE_INCLUDE_DIRECTORIES
                                       "${_cunumpy_kk_inc}")
    else()
      set(KokkosKernels_FOUND FALSE)
    endif()
  endif()
endmacro()
