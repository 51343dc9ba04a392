/**
 * A request from a local address of its own (127.0.0.x: another client address to the server), for the
 * limits kept by client address.
 */
import * as Http from "node:http"

export interface Answer {
  readonly status: number
  readonly headers: Http.IncomingHttpHeaders
  readonly body: any
}

/** One request to the server on 127.0.0.1:`port` from the local address `from`; a JSON body parsed. */
export const request = (
  port: number | string,
  from: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string
): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const req = Http.request(
      { host: "127.0.0.1", port, method, path, headers, localAddress: from, agent: false },
      (res) => {
        let text = ""
        res.setEncoding("utf8")
        res.on("data", (s: string) => (text += s))
        res.on("end", () =>
          resolve({
            status: res.statusCode!,
            headers: res.headers,
            body: text === "" ? null : JSON.parse(text)
          })
        )
      }
    )
    req.on("error", reject)
    req.end(body)
  })
