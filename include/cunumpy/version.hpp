#ifndef CUNUMPY_VERSION_HPP
#define CUNUMPY_VERSION_HPP

#define CUNUMPY_VERSION_MAJOR 0
#define CUNUMPY_VERSION_MINOR 1
#define CUNUMPY_VERSION_PATCH 0
#define CUNUMPY_VERSION                                                        \
  (CUNUMPY_VERSION_MAJOR * 10000 + CUNUMPY_VERSION_MINOR * 100 +               \
   CUNUMPY_VERSION_PATCH)

#endif
