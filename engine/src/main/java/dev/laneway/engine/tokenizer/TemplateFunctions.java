package dev.laneway.engine.tokenizer;

import java.time.ZonedDateTime;
import java.time.format.TextStyle;
import java.util.Locale;

/**
 * The global functions Hugging Face chat templates call. Public and static because the template engine binds them by
 * reflection.
 */
public final class TemplateFunctions {
    private TemplateFunctions() {
    }

    /** {@code raise_exception(message)}: the template rejects the conversation. */
    public static Object raiseException(String message) {
        throw new ChatTemplateException(message == null ? "the chat template rejected the conversation" : message);
    }

    /** {@code strftime_now(format)}: the current local time, formatted with Python's strftime directives. */
    public static String strftimeNow(String format) {
        return strftime(format, ZonedDateTime.now());
    }

    /** Formats a time with the strftime directives templates use ({@code %d %b %Y}, {@code %-d}, ...). */
    static String strftime(String format, ZonedDateTime t) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < format.length(); i++) {
            char c = format.charAt(i);
            if (c != '%' || i + 1 == format.length()) {
                out.append(c);
                continue;
            }
            char d = format.charAt(++i);
            // glibc's "%-d" drops the zero padding
            boolean unpadded = d == '-' && i + 1 < format.length();
            if (unpadded) {
                d = format.charAt(++i);
            }
            out.append(directive(d, t, unpadded));
        }
        return out.toString();
    }

    private static String directive(char d, ZonedDateTime t, boolean unpadded) {
        return switch (d) {
            case 'a' -> t.getDayOfWeek().getDisplayName(TextStyle.SHORT, Locale.ENGLISH);
            case 'A' -> t.getDayOfWeek().getDisplayName(TextStyle.FULL, Locale.ENGLISH);
            case 'b', 'h' -> t.getMonth().getDisplayName(TextStyle.SHORT, Locale.ENGLISH);
            case 'B' -> t.getMonth().getDisplayName(TextStyle.FULL, Locale.ENGLISH);
            case 'd' -> pad(t.getDayOfMonth(), 2, unpadded);
            case 'e' -> String.format("%2d", t.getDayOfMonth());
            case 'm' -> pad(t.getMonthValue(), 2, unpadded);
            case 'y' -> pad(t.getYear() % 100, 2, unpadded);
            case 'Y' -> Integer.toString(t.getYear());
            case 'H' -> pad(t.getHour(), 2, unpadded);
            case 'I' -> pad(t.getHour() % 12 == 0 ? 12 : t.getHour() % 12, 2, unpadded);
            case 'p' -> t.getHour() < 12 ? "AM" : "PM";
            case 'M' -> pad(t.getMinute(), 2, unpadded);
            case 'S' -> pad(t.getSecond(), 2, unpadded);
            case 'j' -> pad(t.getDayOfYear(), 3, unpadded);
            case 'Z' -> t.getZone().getDisplayName(TextStyle.SHORT, Locale.ENGLISH);
            case 'z' -> t.getOffset().getId().equals("Z") ? "+0000" : t.getOffset().getId().replace(":", "");
            case '%' -> "%";
            default -> "%" + d;
        };
    }

    private static String pad(int value, int width, boolean unpadded) {
        String s = Integer.toString(value);
        return unpadded ? s : "0".repeat(Math.max(0, width - s.length())) + s;
    }
}
