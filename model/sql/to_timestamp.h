// model/sql/to_timestamp.h: to_timestamp(text, format) and to_date(text, format), as
// formatting.c's DCH input reads them (PostgreSQL 15, without FX).
//
// Guarantees: the format's fields YYYY, YY (70 to 99 the 1900s, else the 2000s), MM, Mon,
// Month (English names, case ignored), DD, HH24, HH12 / HH with AM / PM, MI, SS, MS and US are
// read as the server reads them: spaces before a field skipped; a number read whole (sign and
// all, as strtol reads it) where the next node is no digit field, else exactly the field's
// width; a space or separator in the format matching one space or separator of the input, or
// none; a quoted or other character consuming one input character; the input ending or the
// format ending stopping the read. The errors are the server's (22007 for a field that is no
// integer or too short, 22008 for a date or time out of range, the 12-hour clock's). What the
// subset does not read is refused (0A000): other fields (TZH, DDD, Y,YYY, ...), FX and FM, a
// month name or AM/PM the input does not spell, a format without a year, hour 24 and second 60.
// to_timestamp gives the local time in the session zone as a timestamptz; to_date the date.
#pragma once

#include "lockstep/model/sql/value.h"

namespace lockstep::sql {

Value to_timestamp_value(const Value& text, const Value& format, bool date);

}  // namespace lockstep::sql
