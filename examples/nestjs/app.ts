// What both NestJS examples share: a provider the webhook handler hands deliveries to, and an
// ordinary JSON route, which Nest's own body parser keeps serving beside the webhook address.
import 'reflect-metadata'
import type { WebhookDelivery } from '@hookguard/core'
import { Body, Controller, Injectable, Module, Post } from '@nestjs/common'

/** Where the app's own work on a verified delivery would go; here it keeps what it was given. */
export class DeliveriesService {
  readonly received: WebhookDelivery[] = []

  handle(delivery: WebhookDelivery): void {
    // The service sends no delivery id: `fingerprint` is the key for a unique constraint of your own.
    this.received.push(delivery)
  }
}

/** An ordinary route of the app, parsed by Nest as always: the webhook address takes nothing from it. */
export class OrdersController {
  create(order: unknown): { created: unknown } {
    return { created: order }
  }
}

export class AppModule {}

// Nest's decorators, applied as calls. An app compiled with `experimentalDecorators` writes them
// as usual: `@Injectable()` on the service, `@Controller('orders')` on the class, `@Post()` on
// create() and `@Body()` on its parameter. This repository compiles without that flag, and Nest's
// decorators are not TypeScript 5's standard ones (parameter decorators have no standard form).
Injectable()(DeliveriesService)
Controller('orders')(OrdersController)
Reflect.decorate([Post()], OrdersController.prototype, 'create', Object.getOwnPropertyDescriptor(OrdersController.prototype, 'create'))
Body()(OrdersController.prototype, 'create', 0)
Module({ controllers: [OrdersController], providers: [DeliveriesService], exports: [DeliveriesService] })(AppModule)
