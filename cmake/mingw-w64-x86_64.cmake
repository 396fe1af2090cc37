# Cross-compiles for 64-bit Windows with mingw-w64 on Debian/Ubuntu
# (gcc-mingw-w64-x86-64).  Programs built for the target (try_run checks,
# ctest) run under Wine.  Static dependencies are looked up in the folder
# given by -DCUDNNCTL_WIN_DEPS=<dir> (or $CUDNNCTL_WIN_DEPS), as built by
# scripts/build-windows.sh, then in the mingw-w64 sysroot.
#
#   cmake -S . -B build-win -G Ninja \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64-x86_64.cmake \
#     -DCUDNNCTL_WIN_DEPS=/var/cache/cudnnctl-win/prefix
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR AMD64)
set(CCTL_MINGW_TRIPLE x86_64-w64-mingw32)

# The win32 thread model: no libwinpthread, nothing here needs pthreads
# (OpenSSL, libarchive and liblzma use Windows threads).  Falls back to the
# default alternative where the -win32 variant is not installed.
find_program(CCTL_MINGW_GCC NAMES ${CCTL_MINGW_TRIPLE}-gcc-win32 ${CCTL_MINGW_TRIPLE}-gcc)
if(NOT CCTL_MINGW_GCC)
  message(FATAL_ERROR "${CCTL_MINGW_TRIPLE}-gcc not found: apt-get install gcc-mingw-w64-x86-64")
endif()
set(CMAKE_C_COMPILER ${CCTL_MINGW_GCC})
find_program(CCTL_MINGW_GXX NAMES ${CCTL_MINGW_TRIPLE}-g++-win32 ${CCTL_MINGW_TRIPLE}-g++)
if(CCTL_MINGW_GXX)
  set(CMAKE_CXX_COMPILER ${CCTL_MINGW_GXX})
endif()
set(CMAKE_RC_COMPILER ${CCTL_MINGW_TRIPLE}-windres)
set(CMAKE_AR ${CCTL_MINGW_TRIPLE}-ar CACHE FILEPATH "")
set(CMAKE_RANLIB ${CCTL_MINGW_TRIPLE}-ranlib CACHE FILEPATH "")

# libgcc linked in: the .exe needs no libgcc_s_seh-1.dll.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static-libgcc")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-static-libgcc")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "-static-libgcc")

# Target programs run under Wine: try_run checks (libarchive's configure
# crashes CMake 3.25 at its ZLIB_WINAPI check without this) and ctest.
find_program(CCTL_WINE NAMES wine wine64 PATHS /usr/lib/wine NO_CMAKE_FIND_ROOT_PATH)
if(CCTL_WINE)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${CCTL_WINE})
endif()

# The dependency prefix; passed on to try_compile projects too.
if(NOT CUDNNCTL_WIN_DEPS AND DEFINED ENV{CUDNNCTL_WIN_DEPS})
  set(CUDNNCTL_WIN_DEPS "$ENV{CUDNNCTL_WIN_DEPS}")
endif()
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES CUDNNCTL_WIN_DEPS)

set(CMAKE_FIND_ROOT_PATH /usr/${CCTL_MINGW_TRIPLE})
if(CUDNNCTL_WIN_DEPS)
  list(PREPEND CMAKE_FIND_ROOT_PATH ${CUDNNCTL_WIN_DEPS})
endif()
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
