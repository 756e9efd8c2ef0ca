import { Duration, Effect, Option } from "effect"
import { HttpServerRequest } from "effect/http"
import { sessionCookieName } from "../../AdminApi/AdminApi.ts"
import { type ConsoleLanguage, consoleLanguage } from "../../Domain/Locale.ts"
import { Preferences } from "../Preferences.ts"

/**
 * The page shell's `<html lang>` (docs/contract.md#12-the-console-speaks-its-operators-language):
 * the signed-in operator's saved language, else the browser's first `es*` or `en*`, else the
 * organization's country's. A database that does not answer quickly leaves the cookie unread: the
 * shell is served all the same, and the script sets the language once it knows the operator.
 */
export const pageLanguage: Effect.Effect<
  ConsoleLanguage,
  never,
  HttpServerRequest.HttpServerRequest | Preferences
> = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const preferences = yield* Preferences
  const token = request.cookies[sessionCookieName]
  const known =
    token === undefined || token === ""
      ? Option.none()
      : yield* preferences.ofSessionToken(token).pipe(
          Effect.timeoutOption(Duration.seconds(1)),
          Effect.map(Option.flatten),
          Effect.orElseSucceed(() => Option.none())
        )
  return consoleLanguage({
    saved: Option.match(known, { onNone: () => null, onSome: (k) => k.language }),
    acceptLanguage: request.headers["accept-language"],
    country: Option.match(known, { onNone: () => null, onSome: (k) => k.country })
  })
})
