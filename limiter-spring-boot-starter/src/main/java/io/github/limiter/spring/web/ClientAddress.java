package io.github.limiter.spring.web;

/**
 * The key of a client address, for a limit keyed by {@code #ip}: an IPv4 address as it is; an IPv6 address as its
 * network of {@code prefixLength} bits in RFC 5952 text ({@code 2001:db8:1:2::/64}), since one IPv6 host is given a
 * whole /64 and may use any address in it (a limit per address would be a limit per call); an IPv4 address carried
 * in IPv6, mapped ({@code ::ffff:192.0.2.1}) or translated by NAT64's well-known prefix ({@code 64:ff9b::192.0.2.1}),
 * as the IPv4 address (behind NAT64 every IPv4 client would otherwise share one /64). The same address gives the same
 * key whatever its notation (a servlet container's {@code 0:0:0:0:0:0:0:1}, a reactive server's {@code ::1}, a zone
 * suffix). Text that is no IPv6 literal (a host name a proxy header gave) is returned as it is. Only ASCII digits
 * count, and nothing is ever resolved.
 */
public final class ClientAddress {

	/** The default network length of an IPv6 client: a host's /64. */
	public static final int DEFAULT_IPV6_PREFIX_LENGTH = 64;

	private ClientAddress() {
	}

	/**
	 * The key of a client address.
	 * @param address the address as the server sees it, or {@code null}
	 * @param prefixLength bits of an IPv6 address that name the client, 1 to 128
	 * @return the key, or {@code null} for {@code null}
	 */
	public static String key(String address, int prefixLength) {
		if (address == null || address.indexOf(':') < 0) {
			return address;
		}
		int[] groups = ipv6(address);
		if (groups == null) {
			return address;
		}
		boolean mapped = groups[0] == 0 && groups[1] == 0 && groups[2] == 0 && groups[3] == 0 && groups[4] == 0
				&& groups[5] == 0xffff;
		boolean translated = groups[0] == 0x64 && groups[1] == 0xff9b && groups[2] == 0 && groups[3] == 0
				&& groups[4] == 0 && groups[5] == 0;
		if (mapped || translated) {
			return (groups[6] >>> 8) + "." + (groups[6] & 0xff) + "." + (groups[7] >>> 8) + "." + (groups[7] & 0xff);
		}
		for (int i = 0; i < 8; i++) {
			int kept = Math.max(0, Math.min(16, prefixLength - 16 * i));
			groups[i] &= (kept == 0) ? 0 : (0xffff << (16 - kept)) & 0xffff;
		}
		String text = format(groups);
		return (prefixLength < 128) ? text + "/" + prefixLength : text;
	}

	/** The eight groups of an IPv6 literal (brackets and zone allowed), or {@code null} when it is none. */
	private static int[] ipv6(String address) {
		String text = address;
		if (text.startsWith("[") && text.endsWith("]")) {
			text = text.substring(1, text.length() - 1);
		}
		int zone = text.indexOf('%');
		if (zone >= 0) {
			text = text.substring(0, zone);
		}
		int[] tail = null;
		int lastColon = text.lastIndexOf(':');
		if (text.indexOf('.', lastColon) > 0) {
			tail = ipv4(text.substring(lastColon + 1));
			if (tail == null) {
				return null;
			}
			text = text.substring(0, lastColon + 1) + "0:0";
		}
		int gap = text.indexOf("::");
		if (gap >= 0 && text.indexOf("::", gap + 1) >= 0) {
			return null;
		}
		int[] head = groups((gap >= 0) ? text.substring(0, gap) : text);
		int[] rest = (gap >= 0) ? groups(text.substring(gap + 2)) : new int[0];
		if (head == null || rest == null || head.length + rest.length > ((gap >= 0) ? 7 : 8)
				|| (gap < 0 && head.length != 8)) {
			return null;
		}
		int[] all = new int[8];
		System.arraycopy(head, 0, all, 0, head.length);
		System.arraycopy(rest, 0, all, 8 - rest.length, rest.length);
		if (tail != null) {
			all[6] = tail[0] << 8 | tail[1];
			all[7] = tail[2] << 8 | tail[3];
		}
		return all;
	}

	/** Colon-separated groups of one to four hex digits; none for empty text. */
	private static int[] groups(String text) {
		if (text.isEmpty()) {
			return new int[0];
		}
		String[] parts = text.split(":", -1);
		int[] groups = new int[parts.length];
		for (int i = 0; i < parts.length; i++) {
			String part = parts[i];
			if (part.isEmpty() || part.length() > 4) {
				return null;
			}
			int value = 0;
			for (int j = 0; j < part.length(); j++) {
				int digit = hex(part.charAt(j));
				if (digit < 0) {
					return null;
				}
				value = value << 4 | digit;
			}
			groups[i] = value;
		}
		return groups;
	}

	/** The value of an ASCII hex digit, or -1. */
	private static int hex(char c) {
		if (c >= '0' && c <= '9') {
			return c - '0';
		}
		if (c >= 'a' && c <= 'f') {
			return c - 'a' + 10;
		}
		return (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
	}

	/** The four bytes of dotted-decimal IPv4 text (ASCII digits, no leading zeros), or {@code null}. */
	private static int[] ipv4(String text) {
		String[] parts = text.split("\\.", -1);
		if (parts.length != 4) {
			return null;
		}
		int[] bytes = new int[4];
		for (int i = 0; i < 4; i++) {
			String part = parts[i];
			if (part.isEmpty() || part.length() > 3 || (part.length() > 1 && part.charAt(0) == '0')) {
				return null;
			}
			int value = 0;
			for (int j = 0; j < part.length(); j++) {
				char c = part.charAt(j);
				if (c < '0' || c > '9') {
					return null;
				}
				value = value * 10 + (c - '0');
			}
			if (value > 255) {
				return null;
			}
			bytes[i] = value;
		}
		return bytes;
	}

	/** RFC 5952 text: lower-case hex without leading zeros, the longest run of two or more zero groups as "::". */
	private static String format(int[] groups) {
		int bestStart = -1;
		int bestLength = 1;
		for (int i = 0; i < 8;) {
			int j = i;
			while (j < 8 && groups[j] == 0) {
				j++;
			}
			if (j - i > bestLength) {
				bestStart = i;
				bestLength = j - i;
			}
			i = (j > i) ? j : i + 1;
		}
		StringBuilder text = new StringBuilder(39);
		for (int i = 0; i < 8; i++) {
			if (i == bestStart) {
				text.append("::");
				i += bestLength - 1;
				continue;
			}
			if (text.length() > 0 && text.charAt(text.length() - 1) != ':') {
				text.append(':');
			}
			text.append(Integer.toHexString(groups[i]));
		}
		return text.toString();
	}

}
