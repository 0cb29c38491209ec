// A real DNS server on loopback (dns2, UDP, random port) serving TXT and A records that the test
// sets. Names without records answer NXDOMAIN, a name asked for a type it lacks answers with no
// records (NODATA), and names listed in `failing` answer SERVFAIL.
import dns2 from 'dns2';

const { Packet } = dns2;
// RFC 1035 response codes (dns2 does not declare its RCODE table in its types).
const SERVFAIL = 2;
const NXDOMAIN = 3;

export interface TestDnsServer {
  /** `127.0.0.1:<port>`, for config.dnsResolvers. */
  address: string;
  port: number;
  /** Sets (replaces) the TXT records of a name; each record is one string. */
  setTxt(name: string, values: string[]): void;
  /** Sets (replaces) the IPv4 address of a name (what pebble resolves before an HTTP-01 check). */
  setA(name: string, address: string): void;
  /** Removes every record of a name. */
  clear(name: string): void;
  /** The name answers SERVFAIL until cleared. */
  fail(name: string): void;
  /** Questions received, lowercase name and type, in order. */
  queries: { name: string; type: number }[];
  close(): Promise<void>;
}

export async function startDnsServer(): Promise<TestDnsServer> {
  const txt = new Map<string, string[]>();
  const a = new Map<string, string>();
  const failing = new Set<string>();
  const queries: { name: string; type: number }[] = [];
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const name = question.name.toLowerCase();
      queries.push({ name, type: question.type });
      if (failing.has(name)) {
        response.header.rcode = SERVFAIL;
      } else {
        const values = txt.get(name);
        const address = a.get(name);
        if (!values && !address) response.header.rcode = NXDOMAIN;
        else if (question.type === Packet.TYPE.A && address) {
          response.answers.push(
            Packet.createResourceFromQuestion(question, {
              type: Packet.TYPE.A,
              class: Packet.CLASS.IN,
              ttl: 1,
              address,
            }),
          );
        } else if (question.type === Packet.TYPE.TXT && values) {
          for (const data of values) {
            response.answers.push(
              Packet.createResourceFromQuestion(question, {
                type: Packet.TYPE.TXT,
                class: Packet.CLASS.IN,
                ttl: 1,
                data,
              }),
            );
          }
        }
      }
      void send(response);
    },
  });
  const addresses = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  const port = addresses.udp?.port;
  if (!port) throw new Error('the test DNS server did not bind a UDP port');
  return {
    address: `127.0.0.1:${port}`,
    port,
    setTxt: (name, values) => {
      failing.delete(name.toLowerCase());
      txt.set(name.toLowerCase(), values);
    },
    setA: (name, address) => {
      failing.delete(name.toLowerCase());
      a.set(name.toLowerCase(), address);
    },
    clear: (name) => {
      txt.delete(name.toLowerCase());
      a.delete(name.toLowerCase());
      failing.delete(name.toLowerCase());
    },
    fail: (name) => {
      failing.add(name.toLowerCase());
    },
    queries,
    close: () => server.close(),
  };
}
