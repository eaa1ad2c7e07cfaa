package io.github.limiter.spring.web;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The key of a client address: IPv4 as it is, IPv6 by its network in RFC 5952 text, whatever its notation, and text
 * that is no address untouched.
 */
class ClientAddressTests {

	@ParameterizedTest(name = "{0} /{1} -> {2}")
	@CsvSource(delimiter = '|', value = {
			"192.0.2.7                               | 64  | 192.0.2.7",
			"2001:db8:1:2:aaaa:bbbb:cccc:dddd        | 64  | 2001:db8:1:2::/64",
			"2001:0DB8:0001:0002:0000:0000:0000:0001 | 64  | 2001:db8:1:2::/64",
			"[2001:db8:1:2::1]                       | 64  | 2001:db8:1:2::/64",
			"fe80::1%eth0                            | 64  | fe80::/64",
			"2001:db8:1:2:3:4:5:6                    | 48  | 2001:db8:1::/48",
			"2001:db8:1:2:3:4:5:6                    | 50  | 2001:db8:1::/50",
			"2001:db8:1:ffff::                       | 50  | 2001:db8:1:c000::/50",
			"2001:db8:1:2:3:4:5:6                    | 128 | 2001:db8:1:2:3:4:5:6",
			"0:0:0:0:0:0:0:1                         | 128 | ::1",
			"::1                                     | 64  | ::/64",
			"1:0:0:2:0:0:0:3                         | 128 | 1:0:0:2::3",
			"1:0:0:2:0:0:3:4                         | 128 | 1::2:0:0:3:4",
			"1:2:3:4:5:6:0:8                         | 128 | 1:2:3:4:5:6:0:8",
			"::ffff:192.0.2.7                        | 64  | 192.0.2.7",
			"64:ff9b::192.0.2.7                      | 64  | 192.0.2.7",
			"64:ff9b::c633:6409                      | 64  | 198.51.100.9",
			"64:ff9b:1::192.0.2.7                    | 64  | 64:ff9b:1::/64",
			"::ffff:01.02.03.04                      | 64  | ::ffff:01.02.03.04",
			"２００１:db8:1:2::1                      | 64  | ２００１:db8:1:2::1",
			"::ffff:１９２.0.2.7                      | 64  | ::ffff:１９２.0.2.7",
			"victim-3                                | 64  | victim-3",
			"1:2:3:4:5:6:7:8:9                       | 64  | 1:2:3:4:5:6:7:8:9",
			"1::2::3                                 | 64  | 1::2::3",
			"12345::1                                | 64  | 12345::1",
			"::ffff:300.1.1.1                        | 64  | ::ffff:300.1.1.1" })
	void keysAnAddress(String address, int prefixLength, String key) {
		assertThat(ClientAddress.key(address, prefixLength)).isEqualTo(key);
	}

}
