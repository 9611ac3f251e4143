#ifndef APP_VERSION_H
#define APP_VERSION_H

#define CLEANROOM_VERSION "0.1.0"

#endif
