# Cross-compiles for 64-bit Arm Linux with Debian's cross compiler
# (g++-aarch64-linux-gnu) against the arm64 multiarch packages, with
# -DCUNUMPY_WITH_KOKKOS=OFF (there is no arm64 Kokkos): scripts/test-aarch64,
# which runs the result under qemu-aarch64. scripts/setup installs both.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Libraries and CMake packages from /usr/lib/aarch64-linux-gnu, never the
# build machine's /usr/lib/x86_64-linux-gnu; pkg-config the same.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(ENV{PKG_CONFIG_LIBDIR}
    /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
# ctest runs the tests under the emulator with the cross toolchain's loader
# and C library (libc6-arm64-cross). LD_LIBRARY_PATH keeps the loader from
# taking the multiarch libc6:arm64 (which libdw-dev:arm64 installs) from
# /lib/aarch64-linux-gnu first: a C library of another build than the
# loader hangs at the first pthread_create.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu
    -E LD_LIBRARY_PATH=/usr/aarch64-linux-gnu/lib)
