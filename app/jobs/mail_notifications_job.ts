import { mailPendingNotifications } from '#notifications/notifications'

/** notifications.mail — each notice is claimed before it is mailed, so two workers never send it twice. */
export default async function mailNotificationsJob() {
  return { mailed: await mailPendingNotifications() }
}
