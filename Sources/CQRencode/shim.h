// libqrencode (Debian: libqrencode-dev): the module grid of a QR code, for the TOTP
// enrolment's `qr_svg` (rendered as SVG by the token worker).
#include <qrencode.h>
